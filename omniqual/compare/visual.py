"""PNG visuals for the parity report: thumbnails, amplified differences, spectrogram differences.

All drawn with Pillow and numpy, so the pictures are deterministic bytes (the same inputs give
the same artifact hash) and need no plotting library.
"""

from __future__ import annotations

import io

import numpy as np
import numpy.typing as npt
from PIL import Image

from omniqual.compare.audio import POWER_FLOOR, power_spectrogram
from omniqual.compare.media import DecodedAudio

# ±this many dB of candidate-minus-reference power saturate the colour scale.
SPECTROGRAM_RANGE_DB = 20.0
SPECTROGRAM_MAX_WIDTH = 512
SPECTROGRAM_HEIGHT = 192


def _png(array: npt.NDArray[np.uint8]) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()


def _displayable(image: npt.NDArray[np.generic]) -> npt.NDArray[np.uint8]:
    """H×W (gray) or H×W×3/4 uint8; single-channel H×W×1 is squeezed for Pillow."""
    array = np.asarray(image)
    if array.dtype != np.uint8:
        array = np.clip(array, 0, 255).astype(np.uint8)
    if array.ndim == 3 and array.shape[2] == 1:
        array = array[:, :, 0]
    if array.ndim == 3 and array.shape[2] not in (3, 4):
        raise ValueError(f"cannot display an image with {array.shape[2]} channels")
    return np.ascontiguousarray(array)


def thumbnail_png(image: npt.NDArray[np.generic], max_side: int = 128) -> bytes:
    """The image as PNG, scaled down (never up) so its longer side is at most ``max_side``."""
    if max_side < 1:
        raise ValueError(f"max_side must be at least 1, got {max_side}")
    picture = Image.fromarray(_displayable(image))
    # Pillow's thumbnail keeps the aspect ratio and only ever shrinks.
    picture.thumbnail((max_side, max_side), Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    return buffer.getvalue()


def difference_png(
    reference: npt.NDArray[np.generic],
    candidate: npt.NDArray[np.generic],
    amplify: float = 8.0,
) -> bytes:
    """|candidate − reference| × ``amplify``, clipped to 255, on the colour channels (alpha is
    dropped so a difference is never drawn transparent)."""
    if np.shape(reference) != np.shape(candidate):
        raise ValueError(
            f"cannot draw a difference of shapes {np.shape(candidate)} and {np.shape(reference)}"
        )
    ref = np.asarray(reference, dtype=np.float32)
    cand = np.asarray(candidate, dtype=np.float32)
    if ref.ndim == 3 and ref.shape[2] == 4:
        ref, cand = ref[:, :, :3], cand[:, :, :3]
    amplified = np.clip(np.abs(cand - ref) * amplify, 0, 255).astype(np.uint8)
    return _png(_displayable(amplified))


def _diverging(values: npt.NDArray[np.float64]) -> npt.NDArray[np.uint8]:
    """Values in [−1, 1] → blue (candidate weaker) · white (equal) · red (candidate stronger)."""
    v = np.clip(values, -1.0, 1.0)
    red = np.where(v < 0, 1.0 + v, 1.0)
    green = 1.0 - np.abs(v)
    blue = np.where(v > 0, 1.0 - v, 1.0)
    return (np.stack([red, green, blue], axis=-1) * 255.0).round().astype(np.uint8)


def spectrogram_difference_png(reference: DecodedAudio, candidate: DecodedAudio) -> bytes:
    """Candidate-minus-reference power in dB over time (x) and frequency (y, low at the bottom),
    channels averaged, common samples only, ±20 dB full scale; STFT as in :mod:`audio`."""
    common = min(reference.length, candidate.length)
    if common == 0:
        raise ValueError("no samples to draw a spectrogram of")
    if reference.channels != candidate.channels:
        raise ValueError(
            f"channel counts differ: candidate {candidate.channels}, reference {reference.channels}"
        )
    ref = reference.samples[:common].astype(np.float64)
    cand = candidate.samples[:common].astype(np.float64)
    difference_db = np.mean(
        [
            10.0
            * np.log10(
                (power_spectrogram(cand[:, c]) + POWER_FLOOR)
                / (power_spectrogram(ref[:, c]) + POWER_FLOOR)
            )
            for c in range(ref.shape[1])
        ],
        axis=0,
    )
    # frames × bins → bins (high frequency first, so low sits at the bottom) × frames.
    picture = Image.fromarray(_diverging(difference_db.T[::-1] / SPECTROGRAM_RANGE_DB))
    width = min(SPECTROGRAM_MAX_WIDTH, max(picture.width, 64))
    picture = picture.resize((width, SPECTROGRAM_HEIGHT), Image.Resampling.NEAREST)
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    return buffer.getvalue()
