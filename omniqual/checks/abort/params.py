"""The abort gate's ``params`` block: the request that is cut, where it is cut, and the cleanup
bounds. Cut points are fractions of a calibrated solo run of the same request; the request is
made longer (more steps) until that run takes at least ``min_service_s``, so the cut lands
inside denoising rather than racing the answer, and until the late cut leaves
``late_cut_headroom`` times its step bound (``calibration``). The work-after-cut bounds hold
each cut to the row's abort boundary: a step-execution cut may compute
``max_steps_after_cut`` more steps of the measured step time, a queued cut (any mode) at most
``max_queued_work_x_service`` of a solo run. Their slack is measured, not declared: the spread
of as many parts of the idle window as ``calibration_repeats`` is the noise of a window in
which nothing ran (never below what the server's CPU time can resolve: a clock tick per process
of its tree), the spread of as many timed solo runs is how much real work varies (see
``bounds``)."""

from pydantic import Field

from omniqual.checks.abort.peer_truth import peer_tolerance
from omniqual.checks.base import CheckParams
from omniqual.checks.soak.params import ShapeSpec
from omniqual.compare import ParityTolerance


class AbortParams(CheckParams):
    shape: ShapeSpec = Field(
        default_factory=lambda: ShapeSpec(name="abort", width=256, height=256, steps=16)
    )
    min_service_s: float = Field(
        default=1.2, gt=0,
        description="The calibrated solo run takes at least this long, so the late cut's work "
        "left stands above its step bound (whose idle CPU noise does not shrink with it).",
    )  # fmt: skip
    max_service_s: float | None = Field(
        default=None,
        gt=0,
        description="Sized to the host: a solo run longer than this takes fewer steps (down to "
        "min_steps), so a slow host cuts a shorter request instead of waiting on every cut.",
    )
    late_cut_headroom: float = Field(
        default=2.0, ge=1,
        description="Once the calibration's fit splits a run into steps and the work outside "
        "them, the request also grows until the latest cut point leaves this many times its "
        "step bound (max_steps_after_cut steps + that outside work), so the measured noise fits "
        "between the bound and the work an ignored cut would still do (up to max_service_s).",
    )  # fmt: skip
    min_steps: int = Field(default=2, gt=0)
    max_steps: int = Field(default=200, gt=0)
    calibration_repeats: int = Field(
        default=2, ge=2,
        description="Timed solo runs (after a warm-up) and idle-window parts: the idle parts' "
        "spread is zero-work noise, the solo runs' spread how much real work varies.",
    )  # fmt: skip
    points: dict[str, float] = Field(
        default_factory=lambda: {"early": 0.15, "middle": 0.5, "late": 0.75},
        description="Cut points in denoising, as fractions of the calibrated service time.",
    )
    cut_attempts: int = Field(
        default=3, ge=1,
        description="Tries of a cut point whose request was answered before it (the service "
        "ran short of its calibrated time); each retry cuts at the point's fraction of the "
        "shortest answer seen. All missed: the case is invalid.",
    )  # fmt: skip
    burst: int = Field(default=3, ge=0, description="Extra back-to-back cuts (leak amplifier).")
    timeout_fraction: float = Field(default=0.5, gt=0, lt=1)
    request_timeout_s: float = Field(default=120.0, gt=0)
    poll_interval_s: float = Field(default=0.05, gt=0)
    cancel_recheck_x_service: float = Field(
        default=1.5, gt=0, description="Wait after a DELETE before re-reading the job."
    )
    health_timeout_s: float = Field(default=5.0, gt=0)
    settle_max_s: float = Field(default=15.0, ge=0)
    max_memory_growth_mib: float = Field(default=64.0, ge=0)
    max_fd_growth: int = Field(default=8, ge=0)
    max_temp_file_growth: int = Field(default=0, ge=0)
    max_gpu_memory_growth_mib: float = Field(
        default=64.0, ge=0, description="GPU memory of the server's own processes (NVML)."
    )
    watch_dirs: tuple[str, ...] = ()
    # Work after a cut (measured from /metrics gauges and process-tree CPU time).
    idle_window_s: float = Field(default=1.0, gt=0, description="Idle CPU baseline window.")
    work_poll_s: float = Field(default=0.1, gt=0, description="/metrics poll interval.")
    work_window_margin_s: float = Field(
        default=0.5, ge=0, description="Watched after the time the cut work would have needed."
    )
    max_steps_after_cut: float = Field(
        default=2.0, ge=0, description="Step execution: steps a cut may still compute."
    )
    max_queued_work_x_service: float = Field(
        default=0.25, ge=0, description="Work after a queued cut, in solo service times "
        "(measured noise included: noise at or above it makes the cut invalid).",
    )  # fmt: skip
    queued_after_peer_x_service: float = Field(
        default=0.5, ge=0, lt=0.9,
        description="Async rows: the queued job is created and cancelled once its peer job has "
        "run this much of a solo run, so the peer's tail in the window (whose work varies like "
        "any run's, and is taken off as noise) is short beside the queued bound.",
    )  # fmt: skip
    tolerance: ParityTolerance = Field(
        default_factory=peer_tolerance,
        description="The bound the peer of a queued cut is held to against its solo same-seed "
        "output where the exact rule cannot apply (a batching row, or a solo run that does "
        "not reproduce itself exactly).",
    )
    gauges_prove_stop: bool = Field(
        default=False,
        description="Whether /metrics gauges dropping to zero proves the cut work stopped. "
        "vLLM-Omni 0.30 drops them at abort while a request-mode worker computes on, so "
        "without the server's CPU time (pid) a clean cut is unproven: invalid.",
    )
