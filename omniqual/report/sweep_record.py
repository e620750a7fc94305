"""What the report reads of an offload-sweep result: the ``effective["sweep"]`` dict, validated.

The report computes nothing about the sweep: the frontier, the dominated points, the
recommendation and the degenerate sentence are the gate's. Every key may be missing (an older or
partial record still renders, showing "—"), and unknown keys are ignored.
"""

from typing import Literal

from pydantic import BaseModel, ConfigDict, JsonValue

_TOLERANT = ConfigDict(extra="ignore", frozen=True)

MemoryField = Literal[
    "peak_pss_bytes_steady", "peak_pss_bytes_load", "peak_rss_bytes", "gpu_bytes_max_device"
]
MEMORY_LABELS: dict[str, str] = {
    "peak_pss_bytes_steady": "peak host PSS, steady phase",
    "peak_pss_bytes_load": "peak host PSS, load phase",
    "peak_rss_bytes": "peak host RSS",
    "gpu_bytes_max_device": "peak GPU memory of the fullest device",
}


class PointParity(BaseModel):
    model_config = _TOLERANT

    outcome: str | None = None
    max_abs_error: float | None = None
    psnr_db: float | None = None


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

    def memory(self, field: MemoryField) -> float | None:
        """The figure named ``field``; the fullest device is the one a budget has to fit."""
        if field == "gpu_bytes_max_device":
            per_device = self.gpu_bytes_per_device
            return max(per_device.values()) if per_device else None
        value: float | None = getattr(self, field)
        return value


class SweepRecord(BaseModel):
    """The sweep of one offload-sweep result."""

    model_config = _TOLERANT

    points: list[SweepPointRecord] = []
    frontier: list[str] = []
    dominated: dict[str, str] = {}
    recommended: str | None = None
    budget_bytes: float | None = None
    degenerate: str | None = None
    memory_note: str | None = None
    memory_field: MemoryField = "peak_pss_bytes_steady"
    """Which memory figure the gate judged the frontier on (the plot's y axis)."""
