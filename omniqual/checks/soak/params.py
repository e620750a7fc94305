"""The soak gate's ``params`` block: request shapes, saturation search, phases and pass criteria.

Reliability thresholds (errors, memory slope, FD/temp growth, health, accounting) are a block of
their own, independent of the latency SLOs (SK-09). Latency bounds are written either in seconds
or as a multiple of the calibrated solo service time of the mix, so one gate file fits targets of
very different speed.
"""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from omniqual.checks.base import CheckParams

Scalar = str | int | float | bool


class _Block(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ShapeSpec(_Block):
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    weight: float = Field(default=1.0, gt=0)
    width: int | None = Field(default=None, gt=0)
    height: int | None = Field(default=None, gt=0)
    num_frames: int | None = Field(default=None, gt=0)
    steps: int | None = Field(default=None, gt=0)
    prompt_tokens: int = Field(default=8, gt=0)
    guidance_scale: float | None = Field(default=None, ge=0)
    extra: dict[str, Scalar] = Field(default_factory=dict)


class SaturationSpec(_Block):
    """Bounded search for the highest rate whose latency percentile meets a loose SLO."""

    assume_rps: float | None = Field(default=None, gt=0, description="Skip the search.")
    slo_percentile: float = Field(default=50.0, gt=0, lt=100)
    slo_bound_x_service: float = Field(default=3.0, gt=1)
    probe_requests: int = Field(default=24, ge=8)
    max_probes: int = Field(default=6, ge=2)
    precision: float = Field(default=0.25, gt=0)
    min_rps: float = Field(default=0.05, gt=0)
    max_rps: float = Field(default=50.0, gt=0)


class PhaseSpec(_Block):
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    factor: float = Field(gt=0, description="Offered rate as a multiple of the saturation rate.")
    requests: int = Field(gt=0, description="Planned requests (injections included).")
    max_duration_s: float | None = Field(default=None, gt=0)
    end_when_sufficient: bool = Field(
        default=False,
        description="End the phase once every claimed percentile is certifiable whatever the "
        "requests in flight turn out to be, the policy's minimum request count is met and "
        "min_duration_s has passed; ``requests`` is then the cap (insufficient at the cap: "
        "invalid, as before).",
    )
    min_duration_s: float = Field(default=0.0, ge=0, description="Never ended before this.")
    claimed_percentiles: tuple[float, ...] = (50.0, 90.0)
    slo_percentile: float | None = Field(default=90.0, gt=0, lt=100)
    slo_bound_s: float | None = Field(default=None, gt=0)
    slo_bound_x_service: float | None = Field(default=4.0, gt=0)
    max_error_rate: float = Field(default=0.0, ge=0, le=1)

    @model_validator(mode="after")
    def _slo_has_bound(self) -> "PhaseSpec":
        if self.slo_percentile is not None and self.slo_percentile not in self.claimed_percentiles:
            raise ValueError("slo_percentile must be one of claimed_percentiles")
        if self.slo_percentile is not None and (
            self.slo_bound_s is None and self.slo_bound_x_service is None
        ):
            raise ValueError("an SLO needs slo_bound_s or slo_bound_x_service")
        return self


class InjectionSpec(_Block):
    """A small share of the mix is sent as faults: disconnects on sync endpoints, DELETE of
    async video jobs. ``cut_fraction`` times the shape's solo service time sets the cut."""

    rate: float = Field(default=0.05, ge=0, lt=0.5)
    cut_fraction: float = Field(default=0.5, gt=0, lt=1)
    min_happened_fraction: float = Field(
        default=0.5, ge=0, le=1,
        description="Injected faults that must really cut (not be answered first); else invalid.",
    )  # fmt: skip


class Reliability(_Block):
    max_memory_slope_mib_per_min: float = Field(default=64.0, ge=0)
    slope_confidence: float = Field(default=0.95, gt=0, lt=1)
    max_fd_growth: int = Field(default=8, ge=0)
    max_temp_file_growth: int = Field(default=0, ge=0)
    max_gpu_memory_slope_mib_per_min: float = Field(
        default=64.0, ge=0, description="GPU memory of the server's own processes (NVML)."
    )
    max_gpu_memory_growth_mib: float = Field(default=256.0, ge=0)
    health_interval_s: float = Field(default=1.0, gt=0)
    health_timeout_s: float = Field(default=5.0, gt=0)
    observer_interval_s: float = Field(default=0.5, gt=0)
    settle_s: float = Field(default=2.0, ge=0)
    watch_dirs: tuple[str, ...] = ()


class Validity(_Block):
    confidence: float = Field(default=0.99, gt=0, lt=1)
    max_p99_issue_lag_s: float = Field(default=0.025, gt=0)
    min_issue_fidelity: float = Field(default=0.95, ge=0, le=1)
    min_phase_requests: int = Field(default=30, gt=0, description="SK-05: no short bursts.")
    below_capacity_busy_fraction: float = Field(
        default=0.8, gt=0, lt=1,
        description="A phase whose server was busy (a request outstanding) at most this share "
        "of its wall time ran below capacity: an SLO miss there is the server's even where "
        "completions fell behind the offered rate near the saturation estimate.",
    )  # fmt: skip


class SoakParams(CheckParams):
    shapes: tuple[ShapeSpec, ...] = Field(min_length=1)
    arrival: Literal["poisson", "gamma", "constant"] = "poisson"
    cv: float | None = Field(default=None, gt=0, description="Gamma arrivals only.")
    warmup_per_shape: int = Field(default=2, ge=1)
    calibration_repeats: int = Field(default=3, ge=1)
    request_timeout_s: float = Field(default=60.0, gt=0)
    drain_grace_s: float = Field(default=30.0, gt=0)
    saturation: SaturationSpec = Field(default_factory=SaturationSpec)
    phases: tuple[PhaseSpec, ...] = Field(min_length=1)
    injections: InjectionSpec = Field(default_factory=InjectionSpec)
    reliability: Reliability = Field(default_factory=Reliability)
    validity: Validity = Field(default_factory=Validity)

    @model_validator(mode="after")
    def _consistent(self) -> "SoakParams":
        if self.arrival == "gamma" and self.cv is None:
            raise ValueError("arrival 'gamma' needs cv")
        names = [p.name for p in self.phases]
        if len(set(names)) != len(names):
            raise ValueError("phase names must be unique")
        return self
