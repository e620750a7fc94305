"""Pictures of one reference-parity case for the run report: per served output, the official
pipeline's output | the served one | their amplified difference (the worst frame for video, the
spectrogram difference for audio).

The pictures are stored content-addressed through the check's artifact sink and described in the
shape the report's parity gallery reads (``effective["parity"]["pairs"]``), the same shape the
candidate ``parity`` gate writes, so both gates' evidence is drawn by one view."""

import contextlib
import io

import numpy as np
from pydantic import JsonValue

from omniqual.checks.base import ArtifactSink
from omniqual.checks.parity.candidate_media import is_identical
from omniqual.checks.parity.candidate_summary import pair_metrics
from omniqual.compare import (
    AudioComparison,
    Comparison,
    MediaDecodeError,
    VideoComparison,
    decode_audio,
    decode_image,
    decode_video,
    difference_png,
    spectrogram_difference_png,
    thumbnail_png,
)
from omniqual.domain.evidence import Artifact

THUMBNAIL_SIDE = 128
DIFFERENCE_GAIN = 8.0


class _Pictures:
    """Stores pictures and keeps their records, so the result lists every file it wrote."""

    def __init__(self, sink: ArtifactSink) -> None:
        self.sink = sink
        self.stored: list[Artifact] = []

    def png(self, data: bytes, role: str, name: str) -> str:
        artifact = self.sink.put_artifact(data, media_type="image/png", role=role, name=name)
        self.stored.append(artifact)
        return artifact.sha256


def _images(kind: str, reference: bytes, served: bytes,
            comparison: Comparison) -> tuple[np.ndarray, np.ndarray, int | None]:  # fmt: skip
    """The two pictures to show side by side, and for video the (worst) frame they are."""
    if kind != "video":
        return decode_image(reference), decode_image(served), None
    # The official side is uint8 frames as .npy (what the reference runner writes).
    frames = np.load(io.BytesIO(reference), allow_pickle=False)
    got = decode_video(served).frames
    common = min(len(frames), len(got))
    if common == 0:
        raise MediaDecodeError("no frame on one side")
    worst = comparison.worst_frame if isinstance(comparison, VideoComparison) else None
    frame = min(worst or 0, common - 1)
    return np.asarray(frames[frame], dtype=np.uint8), got[frame], frame


def picture_entry(
    sink: ArtifactSink,
    *,
    case_id: str,
    index: int,
    label: str,
    kind: str,
    reference: bytes,
    served: bytes,
    comparison: Comparison,
    failures: tuple[str, ...],
) -> tuple[dict[str, JsonValue], tuple[Artifact, ...]]:
    """Store the pictures of one output pair; describe them for the gallery, with the records
    of the files written."""
    pictures = _Pictures(sink)
    files: dict[str, str] = {}
    frame: int | None = None
    # A pair that cannot be drawn (mismatched shapes, no frames) keeps its metrics standing.
    with contextlib.suppress(MediaDecodeError, ValueError):
        if isinstance(comparison, AudioComparison):
            picture = spectrogram_difference_png(decode_audio(reference), decode_audio(served))
            files["spectrogram_difference"] = pictures.png(
                picture, "parity-spectrogram-difference", f"{label} spectrogram difference"
            )
        else:
            official, got, frame = _images(kind, reference, served, comparison)
            files["reference_thumb"] = pictures.png(
                thumbnail_png(official, THUMBNAIL_SIDE), "parity-reference-thumbnail",
                f"{label} official",
            )  # fmt: skip
            files["candidate_thumb"] = pictures.png(
                thumbnail_png(got, THUMBNAIL_SIDE), "parity-candidate-thumbnail",
                f"{label} served",
            )  # fmt: skip
            if official.shape == got.shape:
                files["difference"] = pictures.png(
                    difference_png(official, got, amplify=DIFFERENCE_GAIN),
                    "parity-difference", f"{label} difference x{DIFFERENCE_GAIN:g}",
                )  # fmt: skip
    entry: dict[str, JsonValue] = {
        "case": case_id,
        "index": index,
        "label": label,
        "kind": kind,
        "identical": is_identical(comparison),
        "frame": frame,
        "files": dict(files),
        "metrics": pair_metrics(comparison),
        "failures": list(failures),
    }
    return entry, tuple(pictures.stored)

