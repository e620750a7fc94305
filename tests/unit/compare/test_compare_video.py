"""Video metrics: the corrupted frame is the worst, temporal consistency in closed form, and
frame count, size and fps disagreements."""

from __future__ import annotations

import math

import numpy as np
import pytest

from omniqual.compare import DecodedVideo, ParityTolerance, compare_videos, judge


def flat_video(levels: list[int], fps: float | None = 8.0, size: tuple[int, int] = (24, 16)):
    width, height = size
    frames = np.stack([np.full((height, width, 3), level, dtype=np.uint8) for level in levels])
    return DecodedVideo(frames=frames, fps=fps)


def test_one_corrupted_frame_is_named_worst(rng: np.random.Generator) -> None:
    frames = rng.integers(0, 256, size=(5, 16, 24, 3), dtype=np.uint8)
    corrupted = frames.copy()
    corrupted[3] = 255 - corrupted[3]
    reference = DecodedVideo(frames=frames, fps=8.0)

    result = compare_videos(reference, DecodedVideo(frames=corrupted, fps=8.0))

    assert result.worst_frame == 3
    assert result.psnr_db[:3] == (math.inf,) * 3
    assert result.min_psnr_db == result.psnr_db[3] < 10.0
    assert result.ssim[3] < 0.5
    assert result.mean_ssim == pytest.approx((4 + result.ssim[3]) / 5)
    assert (result.frame_count_match, result.size_match, result.fps_match) == (True, True, True)
    assert result.exact_frames is False


def test_a_constant_offset_gives_closed_form_psnr_and_no_temporal_difference() -> None:
    result = compare_videos(flat_video([10, 60, 110, 160]), flat_video([15, 65, 115, 165]))
    assert result.psnr_db == pytest.approx((20 * math.log10(255 / 5),) * 4)
    assert result.temporal_difference == 0.0


def test_temporal_difference_is_the_mean_gap_between_frame_to_frame_changes() -> None:
    # Reference still; candidate flickers by d: its changes are +d, -d, +d, the reference's 0.
    d = 12
    result = compare_videos(flat_video([100] * 4), flat_video([100, 100 + d, 100, 100 + d]))
    assert result.temporal_difference == pytest.approx(d / 255)


def test_identical_videos_measure_without_infinities() -> None:
    video = flat_video([0, 50, 200])
    result = compare_videos(video, video)
    assert result.exact_frames is True
    names = {m.name: m for m in result.to_measurements()}
    assert "video_min_psnr" not in names and "video_mean_psnr" not in names
    assert names["video_exact_frames"].value == 1.0
    assert names["video_mean_ssim"].value == pytest.approx(1.0)
    assert names["video_mean_ssim"].samples == 3
    assert names["video_temporal_difference"].value == 0.0


def test_frame_count_mismatch_compares_the_common_frames_and_says_so() -> None:
    result = compare_videos(flat_video([1, 2, 3, 4]), flat_video([1, 2]))
    assert result.frame_count_match is False
    assert len(result.psnr_db) == 2
    assert result.mismatches() == ("candidate returned 2 frames, reference 4",)


def test_size_mismatch_leaves_per_frame_metrics_absent() -> None:
    result = compare_videos(flat_video([1, 2], size=(64, 64)), flat_video([1, 2], size=(32, 32)))
    assert result.size_match is False
    assert result.psnr_db == () and result.worst_frame is None and result.min_psnr_db is None
    assert result.absent["psnr"] == "frame sizes differ: candidate 32x32, reference 64x64"
    assert result.mismatches() == ("candidate returned 32x32 frames, reference 64x64",)


def test_fps_mismatch_and_unknown_fps() -> None:
    differ = compare_videos(flat_video([1, 2], fps=16.0), flat_video([1, 2], fps=8.0))
    unknown = compare_videos(flat_video([1, 2], fps=16.0), flat_video([1, 2], fps=None))
    rounded = compare_videos(flat_video([1, 2], fps=30000 / 1001), flat_video([1, 2], fps=29.97))
    assert differ.fps_match is False
    assert differ.mismatches() == ("candidate plays at 8 fps, reference 16",)
    assert unknown.fps_match is None
    assert unknown.absent["fps"] == "the candidate stream declares no frame rate"
    assert rounded.fps_match is True


def test_a_single_frame_has_no_temporal_difference() -> None:
    result = compare_videos(flat_video([5]), flat_video([5]))
    assert result.temporal_difference is None
    assert "needs two" in result.absent["temporal_difference"]


def test_an_empty_video_has_no_per_frame_metrics_and_fails_a_bound() -> None:
    empty = DecodedVideo(frames=np.zeros((0, 16, 24, 3), dtype=np.uint8), fps=8.0)
    result = compare_videos(flat_video([1, 2]), empty)
    assert result.worst_frame is None and result.absent["psnr"] == "no frames to compare"
    bound = ParityTolerance(rationale="test", video={"min_psnr_db": 30})
    assert judge(result, bound) == (
        "candidate returned 0 frames, reference 2",
        "psnr absent (no frames to compare); a bound is set",
    )
