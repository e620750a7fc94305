"""Judging comparisons against parity tolerances: within bounds, beyond bounds, absent metrics,
mismatches that always fail, and the tolerance model's own validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from pydantic import ValidationError

from omniqual.compare import (
    AudioTolerance,
    DecodedAudio,
    DecodedVideo,
    ImageTolerance,
    ParityTolerance,
    VideoTolerance,
    compare_audio,
    compare_images,
    compare_videos,
    judge,
)

FLAT = np.full((16, 16, 3), 100, dtype=np.uint8)
OFFSET_5_PSNR = 20 * math.log10(255 / 5)  # 34.15 dB


def tolerance(**modalities: object) -> ParityTolerance:
    return ParityTolerance.model_validate({"rationale": "synthetic test bounds", **modalities})


def test_rationale_is_required_and_not_empty() -> None:
    with pytest.raises(ValidationError, match="rationale"):
        ParityTolerance.model_validate({"image": {"min_psnr_db": 30}})
    with pytest.raises(ValidationError, match="rationale"):
        ParityTolerance(rationale="")


def test_unknown_fields_are_refused() -> None:
    with pytest.raises(ValidationError, match="min_psnr"):
        tolerance(image={"min_psnr": 30})


def test_an_lpips_bound_is_refused_since_nothing_computes_lpips() -> None:
    """Loading it and judging pixels alone would pass a bound that was never checked."""
    with pytest.raises(ValidationError, match="LPIPS is not computed"):
        tolerance(image={"min_psnr_db": 30}, perceptual={"max_lpips": 0.2, "net": "alex"})


def test_an_image_within_tolerance_has_no_failures() -> None:
    bound = tolerance(image={"min_psnr_db": 30, "min_ssim": 0.9, "max_abs_error": 5})
    assert judge(compare_images(FLAT, FLAT + 5), bound) == ()


def test_an_image_beyond_tolerance_names_each_bound() -> None:
    bound = tolerance(image={"min_psnr_db": 40, "max_abs_error": 2, "require_exact": True})
    failures = judge(compare_images(FLAT, FLAT + 5), bound)
    assert failures == (
        "pixels differ (max abs error 5) where exact equality is required",
        f"psnr {OFFSET_5_PSNR:.4g} dB below the minimum 40 dB",
        "max_abs_error 5 above the maximum 2",
    )


def test_identical_images_pass_any_psnr_bound() -> None:
    bound = tolerance(image=ImageTolerance(min_psnr_db=100, require_exact=True))
    assert judge(compare_images(FLAT, FLAT), bound) == ()


def test_a_size_mismatch_always_fails_even_without_bounds() -> None:
    small = np.zeros((32, 32, 3), dtype=np.uint8)
    large = np.zeros((64, 64, 3), dtype=np.uint8)
    loose = tolerance(image={"min_psnr_db": 0.0})
    assert judge(compare_images(large, small), loose) == (
        "candidate returned 32x32, reference 64x64",
    )


def test_an_absent_metric_under_a_bound_fails_with_its_reason() -> None:
    tiny = np.zeros((2, 2, 3), dtype=np.uint8)
    failures = judge(compare_images(tiny, tiny), tolerance(image={"min_ssim": 0.99}))
    assert len(failures) == 1
    assert failures[0].startswith("ssim absent (image 2x2 with 3 channels is smaller than")
    assert failures[0].endswith("; a bound is set")


def test_a_modality_without_a_tolerance_fails() -> None:
    only_video = tolerance(video={"min_psnr_db": 30})
    assert judge(compare_images(FLAT, FLAT), only_video) == ("no image tolerance is declared",)


def test_video_bounds_hold_per_frame_and_name_the_worst() -> None:
    frames = np.stack([FLAT] * 4)
    noisy = frames.copy()
    noisy[1] += 5
    noisy[2] += 50
    result = compare_videos(DecodedVideo(frames, 8.0), DecodedVideo(noisy, 8.0))

    failures = judge(result, tolerance(video={"min_psnr_db": 30, "max_temporal_difference": 0.05}))

    assert failures == (
        f"psnr below the minimum 30 dB in 1 of 4 frames (worst: frame 2, "
        f"{20 * math.log10(255 / 50):.4g} dB)",
        f"temporal_difference {result.temporal_difference:.4g} above the maximum 0.05",
    )
    assert judge(result, tolerance(video=VideoTolerance(min_psnr_db=10))) == ()


def test_video_count_and_fps_mismatches_always_fail() -> None:
    frames = np.stack([FLAT] * 4)
    result = compare_videos(DecodedVideo(frames, 8.0), DecodedVideo(frames[:3], 16.0))
    assert judge(result, tolerance(video={"min_psnr_db": 0.0})) == (
        "candidate returned 3 frames, reference 4",
        "candidate plays at 16 fps, reference 8",
    )


def test_video_size_mismatch_fails_and_bounds_report_the_missing_metric() -> None:
    small = DecodedVideo(np.zeros((2, 32, 32, 3), dtype=np.uint8), 8.0)
    large = DecodedVideo(np.zeros((2, 64, 64, 3), dtype=np.uint8), 8.0)
    failures = judge(compare_videos(large, small), tolerance(video={"min_psnr_db": 30}))
    assert failures == (
        "candidate returned 32x32 frames, reference 64x64",
        "psnr absent (frame sizes differ: candidate 32x32, reference 64x64); a bound is set",
    )


def test_audio_bounds_and_mismatches() -> None:
    t = np.arange(16000) / 16000
    clip = (0.5 * np.sin(2 * np.pi * 440 * t))[:, np.newaxis].astype(np.float32)
    reference = DecodedAudio(clip, 16000)
    quieter = compare_audio(reference, DecodedAudio(clip * np.float32(0.5), 16000))
    bound = tolerance(audio=AudioTolerance(min_snr_db=20, max_log_spectral_distance_db=1.0))

    failures = judge(quieter, bound)

    assert failures[0] == "snr 6.021 dB below the minimum 20 dB"
    assert failures[1].startswith("log_spectral_distance ")
    assert failures[1].endswith(" dB above the maximum 1 dB")
    resampled = compare_audio(reference, DecodedAudio(clip, 24000))
    assert judge(resampled, tolerance(audio={"min_snr_db": -100.0})) == (
        "candidate returned 24000 Hz, reference 16000 Hz",
        "snr absent (sample rates differ: candidate 24000 Hz, reference 16000 Hz); a bound is set",
    )
    assert judge(compare_audio(reference, reference), bound) == ()


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_a_nan_or_infinite_bound_is_refused(value: float) -> None:
    with pytest.raises(ValidationError, match="finite"):
        tolerance(image={"min_psnr_db": value})


@pytest.mark.parametrize(
    ("modality", "block"),
    [("image", {}), ("image", {"require_exact": False}), ("video", {}), ("audio", {})],
)
def test_a_block_that_bounds_nothing_is_refused(modality: str, block: dict[str, object]) -> None:
    # It would pass every comparison of its modality: a typo, never a tolerance.
    with pytest.raises(ValidationError, match="sets no bound"):
        tolerance(**{modality: block})


def test_a_tolerance_without_any_modality_is_refused() -> None:
    with pytest.raises(ValidationError, match="bounds no modality"):
        tolerance()
