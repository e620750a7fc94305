"""One case of reference parity judged: the served media against the official pipeline's.

Counts must agree; each output pair is decoded and compared with :mod:`omniqual.compare` and held
to the modality's tolerance. Served media that cannot be decoded is a failure of the deployment.
"""

import io
from dataclasses import dataclass

import numpy as np

from omniqual.checks.parity.reference_source import ReferenceMedia
from omniqual.compare import (
    DecodedVideo,
    compare_audio,
    compare_image_bytes,
    compare_videos,
    decode_audio,
    decode_video,
)
from omniqual.compare.media import MediaDecodeError
from omniqual.compare.tolerance import Comparison, ParityTolerance, judge
from omniqual.domain.evidence import Measurement


@dataclass(frozen=True, slots=True)
class CaseJudgement:
    failures: tuple[str, ...]
    measurements: tuple[Measurement, ...]
    summary: str
    """Headline figures for the case's note (PSNR/SSIM, SNR/LSD)."""
    compared: tuple[tuple[int, Comparison, tuple[str, ...]], ...] = ()
    """Per output compared: its index, the comparison and its failures (for the pictures)."""


def _reference_video(data: bytes, fps: float | None) -> DecodedVideo:
    frames = np.load(io.BytesIO(data), allow_pickle=False)
    return DecodedVideo(frames=np.ascontiguousarray(frames, dtype=np.uint8), fps=fps)


def compare_pair(kind: str, reference: bytes, served: bytes, media: ReferenceMedia) -> Comparison:
    if kind == "image":
        return compare_image_bytes(reference, served)
    if kind == "video":
        return compare_videos(_reference_video(reference, media.fps), decode_video(served))
    return compare_audio(decode_audio(reference), decode_audio(served))


def _headline(comparison: Comparison) -> str:
    figures = {m.name.rsplit("/", 1)[-1]: m.value for m in comparison.to_measurements(prefix="")}
    keys = ("psnr", "ssim", "min_psnr", "mean_ssim", "snr", "log_spectral_distance")
    shown = [f"{k} {figures[k]:.4g}" for k in keys if k in figures]
    exact = figures.get("exact_pixels", figures.get("exact_frames", figures.get("exact_samples")))
    if exact == 1.0:
        shown.append("identical")
    return ", ".join(shown)


def judge_case(
    case_id: str,
    kind: str,
    reference: ReferenceMedia,
    served: list[bytes],
    tolerance: ParityTolerance | None,
    side: str = "the official pipeline",
) -> CaseJudgement:
    if tolerance is None:
        return CaseJudgement((f"{case_id}: the gate declares no {kind} tolerance",), (), "")
    failures: list[str] = []
    if len(served) != len(reference.items):
        failures.append(f"{case_id}: served {len(served)} output(s), {side}"
                        f" {len(reference.items)}")  # fmt: skip
    measurements: list[Measurement] = []
    headlines: list[str] = []
    compared: list[tuple[int, Comparison, tuple[str, ...]]] = []
    for index, (ref, got) in enumerate(zip(reference.items, served, strict=False)):
        label = case_id if len(reference.items) == 1 else f"{case_id}#{index}"
        try:
            comparison = compare_pair(kind, ref, got, reference)
        except MediaDecodeError as exc:
            failures.append(f"{label}: served {kind} cannot be decoded: {exc}")
            continue
        measurements += comparison.to_measurements(prefix=f"{label}/")
        beyond = tuple(f"{label}: {reason}" for reason in judge(comparison, tolerance))
        failures += beyond
        compared.append((index, comparison, beyond))
        headlines.append(_headline(comparison))
    return CaseJudgement(tuple(failures), tuple(measurements), "; ".join(headlines),
                         tuple(compared))  # fmt: skip
