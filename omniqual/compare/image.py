"""Image metrics: PSNR, SSIM, max/mean absolute error, exact pixel and byte equality.

PSNR is computed here in closed form (10·log10(R²/MSE)); SSIM is scikit-image's
``structural_similarity`` with ``channel_axis=-1`` and the data range always explicit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from omniqual.compare.measure import finite_measurements
from omniqual.compare.media import decode_image
from omniqual.domain.evidence import Measurement

# scikit-image's default SSIM window; smaller images get the largest odd window that fits.
DEFAULT_SSIM_WINDOW = 7
MIN_SSIM_WINDOW = 3


@dataclass(frozen=True)
class ImageComparison:
    """Reference vs candidate image. A metric is None exactly when ``absent`` names its reason.

    ``psnr_db`` is ``math.inf`` for identical pixels. ``ssim_window`` is the SSIM window side
    actually used (7, or the largest odd side ≥ 3 that fits a smaller image).
    """

    reference_shape: tuple[int, ...]
    candidate_shape: tuple[int, ...]
    same_shape: bool
    psnr_db: float | None
    ssim: float | None
    max_abs_error: float | None
    mean_abs_error: float | None
    exact_pixels: bool
    data_range: float
    ssim_window: int | None = None
    exact_bytes: bool | None = None
    absent: Mapping[str, str] = field(default_factory=dict)

    @property
    def shape_mismatch(self) -> str | None:
        """A sentence naming both sizes (and channel counts, when those differ), else None."""
        if self.same_shape:
            return None
        return describe_mismatch(self.reference_shape, self.candidate_shape)

    def to_measurements(self, prefix: str = "image_") -> tuple[Measurement, ...]:
        """The present metrics as Measurements; an infinite PSNR is left out (JSON has no
        infinity) and is what ``exact_pixels`` = 1 records."""
        return finite_measurements(
            [
                (f"{prefix}psnr", self.psnr_db, "dB"),
                (f"{prefix}ssim", self.ssim, "1"),
                (f"{prefix}max_abs_error", self.max_abs_error, "level"),
                (f"{prefix}mean_abs_error", self.mean_abs_error, "level"),
                (f"{prefix}exact_pixels", float(self.exact_pixels), "bool"),
                (
                    f"{prefix}exact_bytes",
                    None if self.exact_bytes is None else float(self.exact_bytes),
                    "bool",
                ),
            ]
        )


def describe_shape(shape: tuple[int, ...]) -> str:
    """``64x32`` for H=32, W=64 (width first, as image sizes are spoken), plus channels if any."""
    if len(shape) < 2:
        return "x".join(str(n) for n in shape) or "scalar"
    size = f"{shape[1]}x{shape[0]}"
    if len(shape) == 3:
        return f"{size} with {shape[2]} channel{'s' if shape[2] != 1 else ''}"
    return size


def describe_mismatch(reference: tuple[int, ...], candidate: tuple[int, ...]) -> str:
    """``candidate returned 32x32, reference 64x64``; channel counts join in when they differ."""
    sentences = []
    if reference[:2] != candidate[:2]:
        sentences.append(
            f"candidate returned {candidate[1]}x{candidate[0]}, "
            f"reference {reference[1]}x{reference[0]}"
        )
    if reference[2:] != candidate[2:]:
        sentences.append(
            f"candidate has {_channels(candidate)} channel(s), reference {_channels(reference)}"
        )
    return "; ".join(sentences)


def _channels(shape: tuple[int, ...]) -> int:
    return shape[2] if len(shape) == 3 else 1


def psnr_db(
    reference: npt.NDArray[np.floating], candidate: npt.NDArray[np.floating], data_range: float
) -> float:
    """10·log10(R²/MSE) in dB; ``math.inf`` when the arrays are equal."""
    mse = float(np.mean(np.square(reference - candidate)))
    if mse == 0.0:
        return math.inf
    return 10.0 * math.log10(data_range * data_range / mse)


def ssim_window(height: int, width: int) -> int | None:
    """The SSIM window side: 7, or the largest odd side ≥ 3 that fits; None when none fits."""
    window = min(DEFAULT_SSIM_WINDOW, height, width)
    if window % 2 == 0:
        window -= 1
    return window if window >= MIN_SSIM_WINDOW else None


def ssim(
    reference: npt.NDArray[np.floating],
    candidate: npt.NDArray[np.floating],
    data_range: float,
    window: int,
) -> float:
    """Mean SSIM over H×W×C arrays, per channel then averaged (scikit-image)."""
    from skimage.metrics import structural_similarity  # scikit-image is slow to import

    value = structural_similarity(  # type: ignore[no-untyped-call]
        reference, candidate, win_size=window, data_range=data_range, channel_axis=-1
    )
    return float(value)


def _as_hwc(image: npt.NDArray[np.generic]) -> npt.NDArray[np.float64]:
    array = np.asarray(image, dtype=np.float64)
    if array.ndim == 2:
        array = array[:, :, np.newaxis]
    if array.ndim != 3:
        raise ValueError(f"an image is H×W or H×W×C, got an array of shape {array.shape}")
    return array


def compare_images(
    reference: npt.NDArray[np.generic],
    candidate: npt.NDArray[np.generic],
    *,
    data_range: float = 255.0,
) -> ImageComparison:
    """All image metrics of ``candidate`` against ``reference`` (H×W×C or H×W arrays)."""
    if not data_range > 0:
        raise ValueError(f"data_range must be positive, got {data_range}")
    ref, cand = _as_hwc(reference), _as_hwc(candidate)
    ref_shape, cand_shape = tuple(ref.shape), tuple(cand.shape)
    if ref_shape != cand_shape:
        reason = f"shapes differ: {describe_mismatch(ref_shape, cand_shape)}"
        return ImageComparison(
            reference_shape=ref_shape,
            candidate_shape=cand_shape,
            same_shape=False,
            psnr_db=None,
            ssim=None,
            max_abs_error=None,
            mean_abs_error=None,
            exact_pixels=False,
            data_range=data_range,
            absent={name: reason for name in ("psnr", "ssim", "max_abs_error", "mean_abs_error")},
        )
    difference = np.abs(ref - cand)
    window = ssim_window(ref_shape[0], ref_shape[1])
    absent: dict[str, str] = {}
    if window is None:
        absent["ssim"] = (
            f"image {describe_shape(ref_shape)} is smaller than the "
            f"{MIN_SSIM_WINDOW}x{MIN_SSIM_WINDOW} SSIM window"
        )
    return ImageComparison(
        reference_shape=ref_shape,
        candidate_shape=cand_shape,
        same_shape=True,
        psnr_db=psnr_db(ref, cand, data_range),
        ssim=None if window is None else ssim(ref, cand, data_range, window),
        max_abs_error=float(difference.max()),
        mean_abs_error=float(difference.mean()),
        exact_pixels=bool(not difference.any()),
        data_range=data_range,
        ssim_window=window,
        absent=absent,
    )


def compare_image_bytes(reference: bytes, candidate: bytes) -> ImageComparison:
    """Decode both (see :func:`decode_image`), compare on 8-bit data, and record byte equality."""
    comparison = compare_images(decode_image(reference), decode_image(candidate), data_range=255.0)
    return replace(comparison, exact_bytes=reference == candidate)
