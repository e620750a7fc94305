"""Per output of a parity case: decode both sides, compare, judge against the tolerance, and
store the evidence a reviewer looks at (both media, reference | candidate thumbnails and the
amplified difference; the worst frame for video; the spectrogram difference for audio).

Every stored file is content-addressed through the check's artifact sink, and each pair names
its files by sha256 so the report can embed them from the evidence directory."""

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field

from omniqual.checks.base import ArtifactSink
from omniqual.compare import (
    AudioComparison,
    Comparison,
    ImageComparison,
    MediaDecodeError,
    ParityTolerance,
    VideoComparison,
    compare_audio,
    compare_image_bytes,
    compare_videos,
    decode_audio,
    decode_image,
    decode_video,
    difference_png,
    judge,
    spectrogram_difference_png,
    thumbnail_png,
)

MEDIA_TYPES = {"image": "image/png", "video": "video/mp4", "audio": "audio/wav"}


@dataclass(frozen=True, slots=True)
class VisualOptions:
    thumbnail_side: int
    gain: float


@dataclass(frozen=True, slots=True)
class OutputPair:
    """One output of one case, reference against candidate."""

    case_id: str
    index: int
    comparison: Comparison | None
    failures: tuple[str, ...]
    identical: bool
    files: Mapping[str, str] = field(default_factory=dict)
    """role (reference, candidate, reference_thumb, candidate_thumb, difference,
    spectrogram_difference) -> sha256 of the stored file."""
    frame: int | None = None
    """For video: the frame the thumbnails show (the worst one)."""

    @property
    def label(self) -> str:
        return self.case_id if self.index == 0 else f"{self.case_id}#{self.index}"


def compare_media(kind: str, reference: bytes, candidate: bytes) -> Comparison:
    """Raises ``MediaDecodeError`` when either side is not decodable media of ``kind``."""
    if kind == "image":
        return compare_image_bytes(reference, candidate)
    if kind == "video":
        return compare_videos(decode_video(reference), decode_video(candidate))
    if kind == "audio":
        return compare_audio(decode_audio(reference), decode_audio(candidate))
    raise MediaDecodeError(f"no comparison for output kind {kind!r}")


def is_identical(comparison: Comparison) -> bool:
    if isinstance(comparison, ImageComparison):
        return comparison.same_shape and comparison.exact_pixels
    if isinstance(comparison, VideoComparison):
        return not comparison.mismatches() and comparison.exact_frames
    return not comparison.mismatches() and comparison.exact_samples


def pair_outputs(
    kind: str,
    case_id: str,
    index: int,
    reference: bytes,
    candidate: bytes,
    tolerance: ParityTolerance,
    sink: ArtifactSink,
    options: VisualOptions,
) -> OutputPair:
    label = case_id if index == 0 else f"{case_id}#{index}"
    files = {
        "reference": _put(sink, reference, kind, "parity-reference-output", f"{label} reference"),
        "candidate": _put(sink, candidate, kind, "parity-candidate-output", f"{label} candidate"),
    }
    try:
        comparison = compare_media(kind, reference, candidate)
    except MediaDecodeError as exc:
        return OutputPair(case_id, index, None, (f"{label}: undecodable output: {exc}",),
                          False, files)  # fmt: skip
    failures = tuple(f"{label}: {reason}" for reason in judge(comparison, tolerance))
    frame = None
    # A picture that cannot be drawn (mismatched shapes) leaves the metrics standing.
    with contextlib.suppress(MediaDecodeError, ValueError):
        frame = _visuals(sink, kind, label, reference, candidate, comparison, options, files)
    return OutputPair(case_id, index, comparison, failures, is_identical(comparison), files, frame)


def _put(sink: ArtifactSink, data: bytes, kind: str, role: str, name: str) -> str:
    media_type = MEDIA_TYPES.get(kind, "application/octet-stream")
    return sink.put_artifact(data, media_type=media_type, role=role, name=name).sha256


def _png(sink: ArtifactSink, data: bytes, role: str, name: str) -> str:
    return sink.put_artifact(data, media_type="image/png", role=role, name=name).sha256


def _visuals(
    sink: ArtifactSink,
    kind: str,
    label: str,
    reference: bytes,
    candidate: bytes,
    comparison: Comparison,
    options: VisualOptions,
    files: dict[str, str],
) -> int | None:
    """Store the pictures of one pair into ``files``; return the frame shown (video)."""
    if isinstance(comparison, AudioComparison):
        picture = spectrogram_difference_png(decode_audio(reference), decode_audio(candidate))
        files["spectrogram_difference"] = _png(
            sink, picture, "parity-spectrogram-difference", f"{label} spectrogram difference"
        )
        return None
    frame: int | None = None
    if kind == "video" and isinstance(comparison, VideoComparison):
        ref_video, cand_video = decode_video(reference), decode_video(candidate)
        common = min(ref_video.frame_count, cand_video.frame_count)
        if common == 0:
            return None
        frame = min(comparison.worst_frame or 0, common - 1)
        ref_image, cand_image = ref_video.frames[frame], cand_video.frames[frame]
    else:
        ref_image, cand_image = decode_image(reference), decode_image(candidate)
    side = options.thumbnail_side
    files["reference_thumb"] = _png(
        sink,
        thumbnail_png(ref_image, side),
        "parity-reference-thumbnail",
        f"{label} reference thumbnail",
    )
    files["candidate_thumb"] = _png(
        sink,
        thumbnail_png(cand_image, side),
        "parity-candidate-thumbnail",
        f"{label} candidate thumbnail",
    )
    if ref_image.shape == cand_image.shape:
        amplified = difference_png(ref_image, cand_image, amplify=options.gain)
        files["difference"] = _png(sink, amplified, "parity-difference",
                                   f"{label} difference x{options.gain:g}")  # fmt: skip
    return frame
