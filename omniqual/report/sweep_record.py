"""What the report reads of an offload-sweep result: the ``effective["sweep"]`` dict, validated.

The report computes nothing about the sweep: the frontier, the dominated points, the
recommendation and the degenerate sentence are the gate's. Every key may be missing (an older or
partial record still renders, showing "—"), and unknown keys are ignored.
"""

from pydantic import BaseModel, ConfigDict, JsonValue

_TOLERANT = ConfigDict(extra="ignore", frozen=True)


class PointParity(BaseModel):
    model_config = _TOLERANT

    outcome: str | None = None
    max_abs_error: float | None = None
    psnr_db: float | None = None
    identical: bool | None = None
    """Bit-identical output (PSNR is infinite, so the gate records it as None beside this)."""


class SweepPointRecord(BaseModel):
    """One sweep point as the gate recorded it."""

    model_config = _TOLERANT

    name: str
    mode: str | None = None
    settings: dict[str, JsonValue] = {}
    refused: bool = False
    message: str | None = None
    startup_s: float | None = None
    latency_median_s: float | None = None
    latency_min_s: float | None = None
    latency_max_s: float | None = None
    repetitions: int | None = None
    peak_pss_bytes_load: float | None = None
    peak_pss_bytes_steady: float | None = None
    peak_rss_bytes: float | None = None
    gpu_bytes_per_device: dict[str, float] | None = None
    parity: PointParity | None = None
    verdict: str | None = None
    verdict_reasons: list[str] = []
    memory_bytes: float | None = None
    """The memory figure the frontier judged this point on, when the gate records it."""


class SweepRecord(BaseModel):
    """The sweep of one offload-sweep result."""

    model_config = _TOLERANT

    points: list[SweepPointRecord] = []
    frontier: list[str] = []
    dominated: dict[str, str] = {}
    recommended: str | None = None
    recommendation: str | None = None
    """Why that point, or why none (nothing fits, or the fitting ones are not apart)."""
    indistinguishable: list[list[str]] = []
    """Frontier pairs that do not differ beyond their measured spread on either figure."""
    memory_unit: str | None = None
    """The one unit the frontier judged: ``nvml`` (GPU memory) or ``pss`` (host memory)."""
    budget_bytes: float | None = None
    degenerate: str | None = None
    memory_note: str | None = None
    """What the memory figure is on this host (GPU memory, or host memory on CPU)."""
    resolution_note: str | None = None
    """Set when the measured points are closer than the run-to-run resolution: the frontier
    and recommendation are then noise, and the report must say so beside them."""

    def memory(self, point: SweepPointRecord) -> float | None:
        """The memory figure to show and plot for ``point``: its ``memory_bytes`` when the
        record carries that figure at all (absent on a point means it had none). A record
        without it is read with the gate's stated rule, off the point's own figures: GPU memory
        summed over devices when any point has it, else the larger of the two PSS phases."""
        if any(p.memory_bytes is not None for p in self.points):
            return point.memory_bytes
        if any(p.gpu_bytes_per_device for p in self.points):
            gpus = point.gpu_bytes_per_device
            return float(sum(gpus.values())) if gpus else None
        phases = (point.peak_pss_bytes_load, point.peak_pss_bytes_steady)
        return None if None in phases else max(p for p in phases if p is not None)
