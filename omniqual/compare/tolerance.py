"""Parity tolerances per modality (as a gate spec declares them) and judging a comparison.

Judging never passes on missing evidence: a bound whose metric is absent is a failure naming
the absence, and a modality without a declared tolerance is a failure too. Nor on a tolerance
that bounds nothing: a modality block that sets no bound (``image: {}``), or a tolerance with no
modality block, is refused when the spec is loaded; so is a bound on a metric nothing computes
(LPIPS). Disagreements in shape, frame count, frame size, fps, sample rate, length or channels
always fail.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from omniqual.compare.audio import AudioComparison
from omniqual.compare.image import ImageComparison
from omniqual.compare.video import VideoComparison

# A NaN or infinite bound in a spec is a typo, never a tolerance.
_FROZEN = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class _Bounds(BaseModel):
    """A modality's bounds: at least one must be set, else every comparison would pass."""

    model_config = _FROZEN

    @model_validator(mode="after")
    def _bounds_something(self) -> _Bounds:
        values = self.model_dump()
        if not any(v is not None and v is not False for v in values.values()):
            names = ", ".join(values)
            raise ValueError(
                f"sets no bound, so it would pass every comparison (set one of {names})"
            )
        return self


class ImageTolerance(_Bounds):
    """Bounds for one image; an unset bound is not checked."""

    min_psnr_db: float | None = None
    min_ssim: float | None = Field(default=None, ge=-1.0, le=1.0)
    max_abs_error: float | None = Field(default=None, ge=0)
    require_exact: bool = Field(default=False, description="Pixels must be identical.")


class VideoTolerance(_Bounds):
    """Bounds for a video: PSNR, SSIM and max abs error hold for every frame."""

    min_psnr_db: float | None = Field(default=None, description="Per frame.")
    min_ssim: float | None = Field(default=None, ge=-1.0, le=1.0, description="Per frame.")
    max_abs_error: float | None = Field(default=None, ge=0, description="Per frame.")
    require_exact: bool = Field(default=False, description="Every frame identical.")
    max_temporal_difference: float | None = Field(default=None, ge=0, le=1)


class AudioTolerance(_Bounds):
    """Bounds for one audio clip."""

    min_snr_db: float | None = None
    max_log_spectral_distance_db: float | None = Field(default=None, ge=0)
    require_exact: bool = Field(default=False, description="Samples must be identical.")


class ParityTolerance(BaseModel):
    """What a parity gate accepts between reference and candidate, per modality, and why."""

    model_config = _FROZEN

    rationale: str = Field(min_length=1, description="Why these bounds: the source or reasoning.")
    image: ImageTolerance | None = None
    video: VideoTolerance | None = None
    audio: AudioTolerance | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_lpips(cls, data: Any) -> Any:
        # LPIPS needs AlexNet/VGG backbone weights that torchvision downloads at run time and no
        # package index ships, so it could never be computed on a host that installs only from
        # package indexes: a spec bounding it would pass on pixels alone, the bound unchecked.
        if isinstance(data, dict) and "perceptual" in data:
            raise ValueError(
                "perceptual: LPIPS is not computed (its backbone weights come from no package "
                "index); bound images with min_psnr_db and min_ssim instead"
            )
        return data

    @model_validator(mode="after")
    def _some_modality(self) -> ParityTolerance:
        if self.image is None and self.video is None and self.audio is None:
            raise ValueError("bounds no modality: declare image, video or audio bounds")
        return self


Comparison = ImageComparison | VideoComparison | AudioComparison


def judge(comparison: Comparison, tolerance: ParityTolerance) -> tuple[str, ...]:
    """Every reason ``comparison`` is outside ``tolerance``; empty means within it."""
    if isinstance(comparison, ImageComparison):
        return _judge_image(comparison, tolerance.image)
    if isinstance(comparison, VideoComparison):
        return _judge_video(comparison, tolerance.video)
    return _judge_audio(comparison, tolerance.audio)


def _absent(comparison: Comparison, metric: str) -> str:
    return comparison.absent.get(metric, "not computed")


def _fmt(value: float) -> str:
    return "inf" if math.isinf(value) else f"{value:.4g}"


def _judge_image(comparison: ImageComparison, bound: ImageTolerance | None) -> tuple[str, ...]:
    if mismatch := comparison.shape_mismatch:
        return (mismatch,)
    if bound is None:
        return ("no image tolerance is declared",)
    failures: list[str] = []
    if bound.require_exact and not comparison.exact_pixels:
        failures.append(
            f"pixels differ (max abs error {_fmt(comparison.max_abs_error or 0.0)}) "
            "where exact equality is required"
        )
    checks = (
        ("psnr", comparison.psnr_db, bound.min_psnr_db, "min", " dB"),
        ("ssim", comparison.ssim, bound.min_ssim, "min", ""),
        ("max_abs_error", comparison.max_abs_error, bound.max_abs_error, "max", ""),
    )
    for name, value, limit, kind, unit in checks:
        if limit is None:
            continue
        if value is None:
            failures.append(f"{name} absent ({_absent(comparison, name)}); a bound is set")
        elif kind == "min" and value < limit:
            failures.append(f"{name} {_fmt(value)}{unit} below the minimum {_fmt(limit)}{unit}")
        elif kind == "max" and value > limit:
            failures.append(f"{name} {_fmt(value)}{unit} above the maximum {_fmt(limit)}{unit}")
    return tuple(failures)


def _per_frame(
    name: str, values: tuple[float, ...], limit: float, kind: str, unit: str
) -> str | None:
    """One sentence for all frames outside ``limit``: how many, and the worst of them."""
    bad = [i for i, v in enumerate(values) if (v < limit if kind == "min" else v > limit)]
    if not bad:
        return None
    worst = min(bad, key=values.__getitem__) if kind == "min" else max(bad, key=values.__getitem__)
    side = "below the minimum" if kind == "min" else "above the maximum"
    return (
        f"{name} {side} {_fmt(limit)}{unit} in {len(bad)} of {len(values)} frames "
        f"(worst: frame {worst}, {_fmt(values[worst])}{unit})"
    )


def _judge_video(comparison: VideoComparison, bound: VideoTolerance | None) -> tuple[str, ...]:
    failures = list(comparison.mismatches())
    if bound is None:
        return (*failures, "no video tolerance is declared")
    if bound.require_exact and not comparison.exact_frames:
        failures.append("frames differ where exact equality is required")
    checks = (
        ("psnr", comparison.psnr_db, bound.min_psnr_db, "min", " dB"),
        ("ssim", comparison.ssim, bound.min_ssim, "min", ""),
        ("max_abs_error", comparison.max_abs_error, bound.max_abs_error, "max", ""),
    )
    for name, values, limit, kind, unit in checks:
        if limit is None:
            continue
        if not values:
            failures.append(f"{name} absent ({_absent(comparison, name)}); a bound is set")
        elif sentence := _per_frame(name, values, limit, kind, unit):
            failures.append(sentence)
    if bound.max_temporal_difference is not None:
        temporal = comparison.temporal_difference
        if temporal is None:
            reason = _absent(comparison, "temporal_difference")
            failures.append(f"temporal_difference absent ({reason}); a bound is set")
        elif temporal > bound.max_temporal_difference:
            failures.append(
                f"temporal_difference {_fmt(temporal)} above the maximum "
                f"{_fmt(bound.max_temporal_difference)}"
            )
    return tuple(failures)


def _judge_audio(comparison: AudioComparison, bound: AudioTolerance | None) -> tuple[str, ...]:
    failures = list(comparison.mismatches())
    if bound is None:
        return (*failures, "no audio tolerance is declared")
    if bound.require_exact and not comparison.exact_samples:
        failures.append("samples differ where exact equality is required")
    if bound.min_snr_db is not None:
        snr = comparison.snr_db
        if snr is None:
            failures.append(f"snr absent ({_absent(comparison, 'snr')}); a bound is set")
        elif snr < bound.min_snr_db:
            failures.append(f"snr {_fmt(snr)} dB below the minimum {_fmt(bound.min_snr_db)} dB")
    if bound.max_log_spectral_distance_db is not None:
        lsd = comparison.log_spectral_distance_db
        limit = bound.max_log_spectral_distance_db
        if lsd is None:
            reason = _absent(comparison, "log_spectral_distance")
            failures.append(f"log_spectral_distance absent ({reason}); a bound is set")
        elif lsd > limit:
            failures.append(
                f"log_spectral_distance {_fmt(lsd)} dB above the maximum {_fmt(limit)} dB"
            )
    return tuple(failures)
