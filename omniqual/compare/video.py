"""Video metrics: per-frame PSNR/SSIM with the worst frame, frame count/size/fps agreement, and
temporal-difference consistency."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from omniqual.compare.image import psnr_db, ssim, ssim_window
from omniqual.compare.measure import finite_measurements
from omniqual.compare.media import DecodedVideo
from omniqual.domain.evidence import Measurement

DATA_RANGE = 255.0
# Relative fps difference still counted as equal: containers store rates as rationals
# (e.g. 30000/1001) and a re-mux may round them.
FPS_RELATIVE_TOLERANCE = 1e-3


@dataclass(frozen=True)
class VideoComparison:
    """Reference vs candidate video.

    Per-frame metrics cover the common frames (the shorter video's count) when the frame sizes
    agree, and are empty otherwise; ``absent`` gives the reason for every None. ``psnr_db``
    entries are ``math.inf`` for identical frames.

    ``temporal_difference`` is the mean, over all common consecutive frame pairs, pixels and
    channels, of |(c[t+1] − c[t]) − (r[t+1] − r[t])| divided by the data range (255): 0 when the
    candidate changes from frame to frame exactly as the reference does, 1 at most. It is None
    with fewer than two common frames.
    """

    frame_count_match: bool
    size_match: bool
    fps_match: bool | None
    reference_frames: int
    candidate_frames: int
    reference_size: tuple[int, int]
    candidate_size: tuple[int, int]
    reference_fps: float | None
    candidate_fps: float | None
    psnr_db: tuple[float, ...]
    ssim: tuple[float, ...]
    max_abs_error: tuple[float, ...]
    worst_frame: int | None
    min_psnr_db: float | None
    mean_ssim: float | None
    temporal_difference: float | None
    exact_frames: bool
    ssim_window: int | None = None
    absent: Mapping[str, str] = field(default_factory=dict)

    @property
    def compared_frames(self) -> int:
        return len(self.psnr_db)

    def mismatches(self) -> tuple[str, ...]:
        """One sentence per disagreement in frame count, frame size or fps."""
        found: list[str] = []
        if not self.frame_count_match:
            found.append(
                f"candidate returned {self.candidate_frames} frames, "
                f"reference {self.reference_frames}"
            )
        if not self.size_match:
            cw, ch = self.candidate_size
            rw, rh = self.reference_size
            found.append(f"candidate returned {cw}x{ch} frames, reference {rw}x{rh}")
        if self.fps_match is False:
            found.append(
                f"candidate plays at {self.candidate_fps:g} fps, reference {self.reference_fps:g}"
            )
        return tuple(found)

    def to_measurements(self, prefix: str = "video_") -> tuple[Measurement, ...]:
        """Summary figures (worst-frame PSNR, mean SSIM, temporal difference, ...); an infinite
        PSNR is left out and recorded by ``exact_frames`` = 1."""
        samples = self.compared_frames or None
        worst_max_abs = max(self.max_abs_error) if self.max_abs_error else None
        mean_psnr = _finite_mean(self.psnr_db)
        return finite_measurements(
            [
                (f"{prefix}min_psnr", self.min_psnr_db, "dB"),
                (f"{prefix}mean_psnr", mean_psnr, "dB"),
                (f"{prefix}mean_ssim", self.mean_ssim, "1"),
                (f"{prefix}min_ssim", min(self.ssim) if self.ssim else None, "1"),
                (f"{prefix}max_abs_error", worst_max_abs, "level"),
                (
                    f"{prefix}worst_frame",
                    None if self.worst_frame is None else float(self.worst_frame),
                    "index",
                ),
                (f"{prefix}temporal_difference", self.temporal_difference, "1"),
                (f"{prefix}exact_frames", float(self.exact_frames), "bool"),
                (f"{prefix}reference_frames", float(self.reference_frames), "count"),
                (f"{prefix}candidate_frames", float(self.candidate_frames), "count"),
            ],
            samples=samples,
        )


def _finite_mean(values: tuple[float, ...]) -> float | None:
    """The mean PSNR is only a number when no frame is identical (inf)."""
    if not values or not all(math.isfinite(v) for v in values):
        return None
    return float(np.mean(values))


def _fps_match(reference: float | None, candidate: float | None) -> bool | None:
    if reference is None or candidate is None:
        return None
    return math.isclose(reference, candidate, rel_tol=FPS_RELATIVE_TOLERANCE)


def temporal_difference(
    reference: npt.NDArray[np.uint8], candidate: npt.NDArray[np.uint8]
) -> float | None:
    """See :class:`VideoComparison`: mean |Δcandidate − Δreference| / 255 over frame pairs.

    One frame pair at a time in int16 (each term lies in [−510, 510]), so a long video never
    needs a float copy of itself.
    """
    pairs = int(reference.shape[0]) - 1
    if pairs < 1:
        return None
    total = 0.0
    for t in range(pairs):
        ref_step = reference[t + 1].astype(np.int16) - reference[t].astype(np.int16)
        cand_step = candidate[t + 1].astype(np.int16) - candidate[t].astype(np.int16)
        total += float(np.abs(cand_step - ref_step).mean())
    return total / pairs / DATA_RANGE


def compare_videos(reference: DecodedVideo, candidate: DecodedVideo) -> VideoComparison:
    """Frame-by-frame comparison over the common frames, plus container-level agreement."""
    ref_frames, cand_frames = reference.frames, candidate.frames
    size_match = reference.size == candidate.size
    common = min(reference.frame_count, candidate.frame_count)
    absent: dict[str, str] = {}
    psnrs: list[float] = []
    ssims: list[float] = []
    max_abs: list[float] = []
    window: int | None = None
    temporal: float | None = None
    if not size_match:
        cw, ch = candidate.size
        rw, rh = reference.size
        reason = f"frame sizes differ: candidate {cw}x{ch}, reference {rw}x{rh}"
        for name in ("psnr", "ssim", "worst_frame", "temporal_difference"):
            absent[name] = reason
    else:
        window = ssim_window(ref_frames.shape[1], ref_frames.shape[2])
        if window is None:
            absent["ssim"] = f"frames {reference.size[0]}x{reference.size[1]} are below 3x3"
        for index in range(common):
            ref = ref_frames[index].astype(np.float64)
            cand = cand_frames[index].astype(np.float64)
            psnrs.append(psnr_db(ref, cand, DATA_RANGE))
            max_abs.append(float(np.max(np.abs(ref - cand))))
            if window is not None:
                ssims.append(ssim(ref, cand, DATA_RANGE, window))
        temporal = temporal_difference(ref_frames[:common], cand_frames[:common])
        if temporal is None:
            absent["temporal_difference"] = f"only {common} common frame(s); needs two"
        if common == 0:
            absent.update(psnr="no frames to compare", worst_frame="no frames to compare")
            if window is not None:
                absent["ssim"] = "no frames to compare"
    if reference.fps is None or candidate.fps is None:
        side = "reference" if reference.fps is None else "candidate"
        absent["fps"] = f"the {side} stream declares no frame rate"
    worst = int(np.argmin(psnrs)) if psnrs else None
    return VideoComparison(
        frame_count_match=reference.frame_count == candidate.frame_count,
        size_match=size_match,
        fps_match=_fps_match(reference.fps, candidate.fps),
        reference_frames=reference.frame_count,
        candidate_frames=candidate.frame_count,
        reference_size=reference.size,
        candidate_size=candidate.size,
        reference_fps=reference.fps,
        candidate_fps=candidate.fps,
        psnr_db=tuple(psnrs),
        ssim=tuple(ssims),
        max_abs_error=tuple(max_abs),
        worst_frame=worst,
        min_psnr_db=min(psnrs) if psnrs else None,
        mean_ssim=float(np.mean(ssims)) if ssims else None,
        temporal_difference=temporal,
        exact_frames=(
            size_match
            and reference.frame_count == candidate.frame_count
            and bool(np.array_equal(ref_frames, cand_frames))
        ),
        ssim_window=window,
        absent=absent,
    )
