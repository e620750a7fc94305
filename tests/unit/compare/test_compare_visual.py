"""Report visuals: thumbnails shrink and keep aspect, differences are amplified exactly, and the
spectrogram difference is white where the audio agrees and blue where the candidate is weaker."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from omniqual.compare import (
    DecodedAudio,
    difference_png,
    spectrogram_difference_png,
    thumbnail_png,
)
from omniqual.compare.visual import SPECTROGRAM_HEIGHT


def png_array(data: bytes) -> np.ndarray:
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    with Image.open(io.BytesIO(data)) as image:
        return np.asarray(image)


def test_a_thumbnail_fits_max_side_and_keeps_the_aspect(noise_image) -> None:
    thumb = png_array(thumbnail_png(noise_image(256, 512), max_side=128))
    assert thumb.shape == (64, 128, 3)


def test_a_small_image_is_never_enlarged(noise_image) -> None:
    image = noise_image(20, 30)
    assert np.array_equal(png_array(thumbnail_png(image, max_side=128)), image)


def test_the_difference_is_amplified_and_clipped(noise_image) -> None:
    reference = np.full((8, 8, 3), 100, dtype=np.uint8)
    candidate = reference.copy()
    candidate[0, 0] = (103, 97, 200)

    difference = png_array(difference_png(reference, candidate, amplify=8.0))

    assert difference.shape == (8, 8, 3)
    assert tuple(difference[0, 0]) == (24, 24, 255)
    assert not difference[1:].any()


def test_the_difference_of_rgba_drops_alpha(noise_image) -> None:
    image = noise_image(channels=4)
    assert png_array(difference_png(image, image)).shape == (48, 64, 3)


def test_a_difference_needs_equal_shapes(noise_image) -> None:
    with pytest.raises(ValueError, match="shapes"):
        difference_png(noise_image(8, 8), noise_image(8, 9))


def test_the_spectrogram_difference_is_white_where_audio_agrees_and_blue_where_weaker(
    rng: np.random.Generator,
) -> None:
    clip = rng.uniform(-0.5, 0.5, size=(16000, 2)).astype(np.float32)
    reference = DecodedAudio(clip, 16000)

    same = png_array(spectrogram_difference_png(reference, reference))
    weaker = png_array(spectrogram_difference_png(reference, DecodedAudio(clip * 0.5, 16000)))

    assert same.shape[0] == SPECTROGRAM_HEIGHT and same.shape[2] == 3
    assert (same == 255).all()
    # −6 dB on a ±20 dB scale: blue stays full, red and green drop by 6.02/20 of full scale.
    assert (weaker[:, :, 2] == 255).all()
    assert np.all(np.abs(weaker[:, :, 0].astype(int) - round(255 * (1 - 6.0206 / 20))) <= 1)
