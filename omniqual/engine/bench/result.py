"""The result JSON of ``omniqual bench``: one object per phase, plus the run's verdict.

Each phase carries vLLM-Omni's ``benchmarks/diffusion`` metric names and units (seconds,
``completed_requests``, ``throughput_qps``, ``latency_p99``, ``peak_memory_mb_max`` ...) so
dashboards that read that script's ``--output-file`` read a phase unchanged. Two differences are
deliberate and recorded in ``latency_basis``: latencies are timed from the *scheduled* issue time
(no coordinated omission), and a percentile the sample count cannot support is the string
``"insufficient (n < N)"``, never a number (the model refuses a number there).
"""

from __future__ import annotations

import re
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from omniqual.loadgen.records import LoadRun
from omniqual.loadgen.stats import PercentileValue, RunSummary, Verdict

SCHEMA_VERSION: Literal[1] = 1
_INSUFFICIENT = re.compile(r"^insufficient \(n < \d+\)$")

Claimed = float | str | None
"""Seconds when supported, ``"insufficient (n < N)"`` when not, None without any sample."""


def insufficient(required: int) -> str:
    return f"insufficient (n < {required})"


def claimed(value: PercentileValue) -> Claimed:
    if value.samples == 0:
        return None
    if not value.supported or value.value_s is None:
        return insufficient(value.required)
    return value.value_s


def shown(value: Claimed, unit: float = 1.0, fmt: str = ".3f") -> str:
    """A claim for people: the number, or the insufficiency text as is."""
    if value is None:
        return "n/a"
    if isinstance(value, str):
        return value
    return format(value * unit, fmt)


class PercentileClaim(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    percentile: float
    value: Claimed
    samples: int
    required: int = Field(description="samples a claim needs at the run's confidence")
    upper_bound_s: float | None

    @model_validator(mode="after")
    def _never_numeric_when_short(self) -> PercentileClaim:
        if self.samples < self.required and not isinstance(self.value, str | None):
            raise ValueError(
                f"p{self.percentile:g} has {self.samples} < {self.required} samples: "
                "it must be stored as insufficient, not as a number"
            )
        if isinstance(self.value, str) and not _INSUFFICIENT.match(self.value):
            raise ValueError(f"p{self.percentile:g}: unexpected text {self.value!r}")
        return self


class BenchPhase(BaseModel):
    """One open-loop phase at one offered rate."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # vLLM-Omni benchmarks/diffusion fields (same names and units).
    duration: float
    completed_requests: int
    failed_requests: int
    throughput_qps: float
    latency_mean: float | None
    latency_median: Claimed
    latency_p50: Claimed
    latency_p95: Claimed
    latency_p99: Claimed
    peak_memory_mb_max: float | None
    peak_memory_mb_mean: float | None
    peak_memory_mb_median: float | None
    endpoint: str
    model: str
    dataset: str
    task: str
    # omniqual's additions.
    latency_basis: Literal["scheduled"] = "scheduled"
    offered_rate: float
    profile: str
    seed: int | None
    planned_requests: int
    issued_requests: int
    not_sent_requests: int
    achieved_over_offered: float
    achieved_over_planned: float
    p99_issue_lag_s: float | None
    max_issue_lag_s: float | None
    latency_from_send_p50: Claimed
    latency_from_send_p99: Claimed
    percentiles: tuple[PercentileClaim, ...]
    error_kinds: dict[str, int]
    verdict: Verdict
    reasons: tuple[str, ...]

    @model_validator(mode="after")
    def _fields_match_claims(self) -> BenchPhase:
        by_p = {c.percentile: c.value for c in self.percentiles}
        for p, value in ((50.0, self.latency_p50), (95.0, self.latency_p95),
                         (99.0, self.latency_p99), (50.0, self.latency_median)):  # fmt: skip
            if p in by_p and by_p[p] != value:
                raise ValueError(f"latency p{p:g} disagrees with its percentile claim")
        if self.verdict is Verdict.INVALID and not self.reasons:
            raise ValueError("an INVALID phase must say why")
        return self


class SweepSummary(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    slo_percentile: float
    slo_bound_s: float
    saturation_rate: float | None
    lowest_failing_rate: float | None
    stop_reason: str
    probe_verdicts: tuple[str, ...]


class BenchResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = SCHEMA_VERSION
    tool: Literal["omniqual bench"] = "omniqual bench"
    omniqual_version: str
    started_at: str
    target: str
    workload: str
    mode: Literal["rate", "rates", "sweep"]
    transport: str
    confidence: float
    max_p99_issue_lag_s: float
    phases: tuple[BenchPhase, ...] = Field(min_length=1)
    sweep: SweepSummary | None = None
    verdict: Verdict
    reasons: tuple[str, ...]
    # A single-rate run also carries its phase's vLLM-Omni fields at the top level, where
    # dashboards reading that script's --output-file look (absent for several phases).
    duration: float | None = None
    completed_requests: int | None = None
    failed_requests: int | None = None
    throughput_qps: float | None = None
    latency_mean: float | None = None
    latency_median: Claimed = None
    latency_p50: Claimed = None
    latency_p95: Claimed = None
    latency_p99: Claimed = None
    peak_memory_mb_max: float | None = None
    peak_memory_mb_mean: float | None = None
    peak_memory_mb_median: float | None = None
    endpoint: str | None = None
    model: str | None = None
    dataset: str | None = None
    task: str | None = None

    @model_validator(mode="after")
    def _top_level_is_the_single_phase(self) -> BenchResult:
        if len(self.phases) != 1 and self.duration is not None:
            raise ValueError("top-level vLLM-Omni fields belong to single-phase runs only")
        if self.duration is not None:
            phase = self.phases[0]
            wrong = [k for k in VLLM_OMNI_FIELDS if getattr(self, k) != getattr(phase, k)]
            if wrong:
                raise ValueError(f"top-level {', '.join(sorted(wrong))} differ from the phase")
        return self


VLLM_OMNI_FIELDS = (
    "duration", "completed_requests", "failed_requests", "throughput_qps", "latency_mean",
    "latency_median", "latency_p50", "latency_p95", "latency_p99", "peak_memory_mb_max",
    "peak_memory_mb_mean", "peak_memory_mb_median", "endpoint", "model", "dataset", "task",
)  # fmt: skip


def flat_fields(phases: tuple[BenchPhase, ...]) -> dict[str, object]:
    """The single phase's vLLM-Omni fields for the top level (nothing for several phases)."""
    return {k: getattr(phases[0], k) for k in VLLM_OMNI_FIELDS} if len(phases) == 1 else {}


def _peaks(values: list[float]) -> tuple[float | None, float | None, float | None]:
    # As vLLM-Omni: only positive server-reported figures count.
    data = np.array([v for v in values if v > 0], dtype=np.float64)
    if not data.size:
        return None, None, None
    return float(data.max()), float(data.mean()), float(np.median(data))


def build_phase(
    run: LoadRun,
    summary: RunSummary,
    *,
    meta: dict[str, str],
    profile: str,
) -> BenchPhase:
    """A phase from a finished load run and its summary; ``meta`` holds endpoint, model,
    dataset and task as vLLM-Omni names them."""
    latency, send = summary.latency_from_schedule, summary.latency_from_send
    claims = tuple(
        PercentileClaim(
            percentile=v.percentile,
            value=claimed(v),
            samples=v.samples,
            required=v.required,
            upper_bound_s=v.upper_bound_s,
        )
        for v in latency.percentiles
    )
    by_p = {c.percentile: c.value for c in claims}
    counts, rates = summary.counts, summary.rates
    # vLLM-Omni's duration: first dispatch to the last completion.
    sent = [r.sent_s for r in run.records if r.sent_s is not None]
    ended = [r.ended_s for r in run.records if r.ended_s is not None]
    duration = max(ended) - min(sent) if sent and ended else 0.0
    completed = counts.ok
    peak_max, peak_mean, peak_median = _peaks(
        [r.peak_memory_mb for r in run.records if r.peak_memory_mb is not None]
    )
    offered = rates.offered
    return BenchPhase(
        duration=duration,
        completed_requests=completed,
        failed_requests=counts.planned - completed,
        throughput_qps=completed / duration if duration > 0 else 0.0,
        latency_mean=latency.mean_s,
        latency_median=by_p.get(50.0),
        latency_p50=by_p.get(50.0),
        latency_p95=by_p.get(95.0),
        latency_p99=by_p.get(99.0),
        peak_memory_mb_max=peak_max,
        peak_memory_mb_mean=peak_mean,
        peak_memory_mb_median=peak_median,
        offered_rate=offered,
        profile=profile,
        seed=run.requested.seed,
        planned_requests=counts.planned,
        issued_requests=counts.issued,
        not_sent_requests=sum(1 for r in run.records if r.sent_s is None),
        achieved_over_offered=rates.achieved_issue / offered if offered > 0 else 0.0,
        achieved_over_planned=rates.issue_fidelity,
        p99_issue_lag_s=run.effective.p99_issue_lag_s,
        max_issue_lag_s=run.effective.max_issue_lag_s,
        latency_from_send_p50=claimed(send.at(50.0)),
        latency_from_send_p99=claimed(send.at(99.0)),
        percentiles=claims,
        error_kinds=dict(counts.error_kinds),
        verdict=summary.validity.verdict,
        reasons=tuple(r.detail for r in summary.validity.reasons),
        **meta,
    )
