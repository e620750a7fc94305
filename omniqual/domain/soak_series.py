"""The soak's time series as evidence: per phase the requests (scheduled time, latency, outcome),
offered against achieved rate per window and the latency CDF, and the server's memory over the
same clock.

One clock: seconds since the resource watch started (the memory series' own clock); a phase's
``start_s`` places its schedule (time zero of its requests) on it. The full series is the
``soak-series.json`` artifact; the result's ``effective["soak_series"]`` holds the same model
compacted (no per-request list, memory thinned) so a report can draw it without the artifact.
"""

from pydantic import BaseModel, ConfigDict, Field

SOAK_SERIES_SCHEMA_VERSION = 1
MAX_CDF_POINTS = 201
MAX_MEMORY_POINTS = 400

_FROZEN = ConfigDict(extra="ignore", frozen=True)


class RequestPoint(BaseModel):
    model_config = _FROZEN

    index: int
    entry: str
    injected: bool = False
    scheduled_s: float = Field(description="On the phase's own clock (its schedule's zero).")
    latency_s: float | None = Field(default=None, description="From schedule to end.")
    outcome: str


class RateWindow(BaseModel):
    """One window of a phase: offered (scheduled), issued (sent) and achieved (answered OK)
    requests per second."""

    model_config = _FROZEN

    start_s: float = Field(description="On the phase's own clock.")
    end_s: float
    offered_rps: float
    issued_rps: float
    achieved_rps: float


class PhaseSeries(BaseModel):
    model_config = _FROZEN

    name: str
    factor: float | None = None
    offered_rps: float
    start_s: float = Field(description="The phase's time zero on the series clock.")
    duration_s: float
    window_s: float
    requests: list[RequestPoint] = []
    windows: list[RateWindow] = []
    latency_cdf: list[tuple[float, float]] = Field(
        default=[], description="(latency s, fraction ≤) of the plain requests answered OK."
    )
    ok: int = 0
    failed: int = 0
    """Plain requests that did not end OK (errors, timeouts, cancelled, never issued)."""
    injected: int = 0


class MemoryPoint(BaseModel):
    model_config = _FROZEN

    elapsed_s: float
    memory_bytes: int | None = None
    gpu_tree_bytes: int | None = None
    open_fds: int | None = None
    temp_files: int | None = None


class SoakSeries(BaseModel):
    model_config = _FROZEN

    schema_version: int = SOAK_SERIES_SCHEMA_VERSION
    memory_source: str | None = Field(
        default=None, description="process-tree (PSS, else RSS) or metrics (API process RSS)."
    )
    phases: list[PhaseSeries] = []
    memory: list[MemoryPoint] = []
    compact: bool = Field(default=False, description="Requests dropped, memory thinned.")

    def compacted(self) -> "SoakSeries":
        step = max(1, -(-len(self.memory) // MAX_MEMORY_POINTS))
        thinned = self.memory[::step]
        if self.memory and thinned[-1] is not self.memory[-1]:
            thinned.append(self.memory[-1])  # the last point is the one judged "after"
        phases = [p.model_copy(update={"requests": []}) for p in self.phases]
        return self.model_copy(update={"phases": phases, "memory": thinned, "compact": True})


def latency_cdf(latencies: list[float]) -> list[tuple[float, float]]:
    """The empirical CDF, exact up to :data:`MAX_CDF_POINTS` samples, else at that many evenly
    spaced ranks (the first and last sample always kept)."""
    ordered = sorted(latencies)
    n = len(ordered)
    if n <= MAX_CDF_POINTS:
        return [(v, (i + 1) / n) for i, v in enumerate(ordered)]
    ranks = sorted({round(k * (n - 1) / (MAX_CDF_POINTS - 1)) for k in range(MAX_CDF_POINTS)})
    return [(ordered[r], (r + 1) / n) for r in ranks]
