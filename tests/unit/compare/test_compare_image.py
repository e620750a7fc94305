"""Image metrics against closed-form values: PSNR of a constant offset, SSIM of an image with
itself, absolute errors, shape mismatches and exact-byte equality."""

from __future__ import annotations

import math

import numpy as np
import pytest
from skimage.metrics import structural_similarity
from synthetic_media import png_bytes

from omniqual.compare import compare_image_bytes, compare_images
from omniqual.domain.evidence import Measurement


@pytest.mark.parametrize("offset", [1, 5, 17, 100])
def test_psnr_of_a_constant_offset_is_20_log10_of_255_over_the_offset(offset: int) -> None:
    reference = np.full((32, 40, 3), 100, dtype=np.uint8)
    candidate = reference + np.uint8(offset)

    result = compare_images(reference, candidate)

    assert result.psnr_db == pytest.approx(20 * math.log10(255 / offset), abs=1e-9)
    assert result.max_abs_error == offset
    assert result.mean_abs_error == offset
    assert result.exact_pixels is False
    assert result.same_shape is True


def test_an_image_against_itself_has_infinite_psnr_and_ssim_one(noise_image) -> None:
    image = noise_image()

    result = compare_images(image, image.copy())

    assert result.psnr_db == math.inf
    assert result.ssim == pytest.approx(1.0, abs=1e-12)
    assert result.exact_pixels is True
    assert result.max_abs_error == 0.0
    assert result.absent == {}


def test_infinite_psnr_is_left_out_of_measurements_which_survive_json(noise_image) -> None:
    image = noise_image()

    measurements = compare_images(image, image).to_measurements(prefix="case1_")

    names = {m.name: m for m in measurements}
    assert "case1_psnr" not in names
    assert names["case1_exact_pixels"].value == 1.0
    assert names["case1_ssim"].value == pytest.approx(1.0)
    for measurement in measurements:
        again = Measurement.model_validate_json(measurement.model_dump_json())
        assert again == measurement


def test_a_finite_psnr_is_measured_in_db(noise_image) -> None:
    image = noise_image()
    names = {m.name: m for m in compare_images(image, image ^ 1).to_measurements()}
    assert names["image_psnr"].unit == "dB"
    assert names["image_psnr"].value == pytest.approx(20 * math.log10(255))
    assert names["image_exact_pixels"].value == 0.0


def test_ssim_is_per_channel_with_the_explicit_data_range(noise_image) -> None:
    reference = noise_image()
    candidate = reference.copy()
    candidate[:, :, 0] = np.clip(candidate[:, :, 0].astype(int) + 40, 0, 255)
    red_only = structural_similarity(
        reference[:, :, 0].astype(float), candidate[:, :, 0].astype(float), data_range=255.0
    )

    result = compare_images(reference, candidate)

    # Two untouched channels score 1; the mean over channels is (ssim_red + 2) / 3.
    assert result.ssim == pytest.approx((red_only + 2.0) / 3.0)
    assert result.ssim_window == 7


def test_data_range_is_explicit_for_float_images() -> None:
    reference = np.full((16, 16, 1), 0.5)
    result = compare_images(reference, reference + 0.1, data_range=1.0)
    assert result.psnr_db == pytest.approx(20.0)


@pytest.mark.parametrize(("height", "width", "window"), [(6, 9, 5), (4, 30, 3), (3, 3, 3)])
def test_small_images_get_the_largest_odd_ssim_window_that_fits(
    noise_image, height: int, width: int, window: int
) -> None:
    image = noise_image(height, width)
    result = compare_images(image, image)
    assert result.ssim_window == window
    assert result.ssim == pytest.approx(1.0)


def test_an_image_below_3x3_has_no_ssim_and_says_why(noise_image) -> None:
    image = noise_image(2, 5)
    result = compare_images(image, image)
    assert result.ssim is None
    assert "smaller than the 3x3 SSIM window" in result.absent["ssim"]
    assert result.psnr_db == math.inf


def test_different_sizes_give_no_metrics_and_name_both_sizes(noise_image) -> None:
    result = compare_images(noise_image(64, 64), noise_image(32, 32))

    assert result.same_shape is False
    assert (result.psnr_db, result.ssim, result.max_abs_error) == (None, None, None)
    assert result.shape_mismatch == "candidate returned 32x32, reference 64x64"
    assert result.absent["psnr"] == "shapes differ: candidate returned 32x32, reference 64x64"
    assert result.to_measurements() == (
        Measurement(name="image_exact_pixels", value=0.0, unit="bool"),
    )


def test_different_channel_counts_are_named(noise_image) -> None:
    result = compare_images(noise_image(channels=3), noise_image(channels=4))
    assert result.shape_mismatch == "candidate has 4 channel(s), reference 3"


def test_byte_comparison_tells_exact_bytes_from_exact_pixels(noise_image) -> None:
    image = noise_image()
    fast, small = png_bytes(image, compress_level=1), png_bytes(image, compress_level=9)
    assert fast != small

    same_pixels = compare_image_bytes(fast, small)
    same_bytes = compare_image_bytes(fast, fast)
    different = compare_image_bytes(fast, png_bytes(image ^ 4))

    assert (same_pixels.exact_pixels, same_pixels.exact_bytes) == (True, False)
    assert (same_bytes.exact_pixels, same_bytes.exact_bytes) == (True, True)
    assert (different.exact_pixels, different.exact_bytes) == (False, False)
    assert different.max_abs_error == 4.0


def test_data_range_must_be_positive(noise_image) -> None:
    image = noise_image()
    with pytest.raises(ValueError, match="data_range"):
        compare_images(image, image, data_range=0.0)
