"""Honest summaries of a load run: percentiles with their sample counts and sufficiency, outcome
counts, offered versus achieved rates, and a VALID/INVALID verdict that lists every broken rule.

Latency percentiles are computed over successful requests only, timed from the scheduled issue
time (coordinated-omission free); latency from the actual send is reported beside them.
Empirical percentiles use numpy's default linear interpolation, as ``vllm bench serve`` does, so
figures compare with that peer; sufficiency is judged separately (see ``sufficiency``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from omniqual.loadgen.records import LoadRun, RecordStatus
from omniqual.loadgen.sufficiency import (
    DEFAULT_CONFIDENCE,
    max_certifiable_percentile,
    required_samples,
    upper_confidence_bound,
)

DEFAULT_PERCENTILES = (50.0, 95.0, 99.0)


@dataclass(frozen=True, slots=True)
class PercentileValue:
    percentile: float
    value_s: float | None  # empirical; None without samples
    samples: int
    required: int  # samples an upper confidence bound needs at ``confidence``
    upper_bound_s: float | None  # None when the sample count does not support the claim
    confidence: float

    @property
    def supported(self) -> bool:
        return self.samples >= self.required


@dataclass(frozen=True, slots=True)
class MetricSummary:
    name: str
    samples: int
    mean_s: float | None
    min_s: float | None
    max_s: float | None
    percentiles: tuple[PercentileValue, ...]

    def at(self, percentile: float) -> PercentileValue:
        for value in self.percentiles:
            if value.percentile == percentile:
                return value
        raise KeyError(f"{self.name}: percentile {percentile} was not computed")


def summarize_values(
    name: str,
    values: Sequence[float],
    percentiles: Sequence[float] = DEFAULT_PERCENTILES,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
) -> MetricSummary:
    data = np.asarray(values, dtype=np.float64)
    n = int(data.size)
    rows = tuple(
        PercentileValue(
            percentile=p,
            value_s=float(np.percentile(data, p)) if n else None,
            samples=n,
            required=required_samples(p, confidence=confidence),
            upper_bound_s=upper_confidence_bound(data.tolist(), p, confidence=confidence),
            confidence=confidence,
        )
        for p in percentiles
    )
    if not n:
        return MetricSummary(name, 0, None, None, None, rows)
    return MetricSummary(name, n, float(data.mean()), float(data.min()), float(data.max()), rows)


@dataclass(frozen=True, slots=True)
class OutcomeCounts:
    planned: int
    issued: int
    ok: int
    error: int
    aborted: int
    timeout: int
    cancelled: int
    not_issued: int
    waited_for_slot: int
    error_kinds: tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True)
class RateSummary:
    offered: float  # requested rate (the trace's planned rate for replays)
    planned: float  # what this schedule draw contains
    achieved_issue: float
    achieved_completion: float  # responses of any status per second of actual duration
    throughput_ok: float  # successful responses per second of actual duration

    @property
    def issue_fidelity(self) -> float:
        return self.achieved_issue / self.planned if self.planned > 0 else 0.0

    @property
    def completion_ratio(self) -> float:
        return self.achieved_completion / self.offered if self.offered > 0 else 0.0


class Verdict(StrEnum):
    VALID = "VALID"
    INVALID = "INVALID"


class ReasonCode(StrEnum):
    TOO_FEW_SAMPLES = "too_few_samples"
    SCHEDULE_FELL_BEHIND = "schedule_fell_behind"
    RUN_TOO_SHORT = "run_too_short"
    RATE_BELOW_BOUND = "rate_below_bound"


@dataclass(frozen=True, slots=True)
class ValidityReason:
    code: ReasonCode
    detail: str


@dataclass(frozen=True, slots=True)
class Validity:
    verdict: Verdict
    reasons: tuple[ValidityReason, ...]


class ValidityPolicy(BaseModel):
    """Thresholds for a VALID run; defaults follow LoadGen where it has one (c = 0.99)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    claimed_percentiles: tuple[float, ...] = DEFAULT_PERCENTILES
    confidence: float = Field(default=DEFAULT_CONFIDENCE, gt=0, lt=1)
    max_p99_issue_lag_s: float = Field(default=0.010, gt=0)
    min_issue_fidelity: float = Field(default=0.99, ge=0, le=1)
    min_completion_ratio: float | None = Field(default=None, ge=0)
    min_duration_s: float | None = Field(default=None, gt=0)
    min_count: int | None = Field(default=None, gt=0)


@dataclass(frozen=True, slots=True)
class RunSummary:
    counts: OutcomeCounts
    rates: RateSummary
    latency_from_schedule: MetricSummary
    latency_from_send: MetricSummary
    issue_lag: MetricSummary
    slot_wait: MetricSummary
    max_certifiable_percentile: float | None
    validity: Validity


def _counts(run: LoadRun) -> OutcomeCounts:
    by_status = Counter(record.status for record in run.records)
    kinds = Counter(
        record.error_kind
        for record in run.records
        if record.error_kind is not None and record.status is not RecordStatus.OK
    )
    return OutcomeCounts(
        planned=len(run.records),
        issued=run.effective.issued,
        ok=by_status[RecordStatus.OK],
        error=by_status[RecordStatus.ERROR],
        aborted=by_status[RecordStatus.ABORTED],
        timeout=by_status[RecordStatus.TIMEOUT],
        cancelled=by_status[RecordStatus.CANCELLED],
        not_issued=by_status[RecordStatus.NOT_ISSUED],
        waited_for_slot=run.effective.waited_for_slot,
        error_kinds=tuple(sorted(kinds.items())),
    )


def _judge(
    run: LoadRun,
    counts: OutcomeCounts,
    rates: RateSummary,
    latency: MetricSummary,
    policy: ValidityPolicy,
) -> Validity:
    reasons: list[ValidityReason] = []

    def fail(code: ReasonCode, detail: str) -> None:
        reasons.append(ValidityReason(code, detail))

    certifiable = max_certifiable_percentile(counts.ok, confidence=policy.confidence)
    best = f"p{certifiable:.1f}" if certifiable is not None else "none"
    for claim in latency.percentiles:
        if not claim.supported:
            fail(
                ReasonCode.TOO_FEW_SAMPLES,
                f"p{claim.percentile:g} needs >= {claim.required} successful samples at "
                f"{policy.confidence:.0%} confidence, the run has {claim.samples} "
                f"(highest certifiable: {best})",
            )
    lag, max_lag = run.effective.p99_issue_lag_s, policy.max_p99_issue_lag_s
    if lag is not None and lag > max_lag:
        fail(
            ReasonCode.SCHEDULE_FELL_BEHIND,
            f"p99 issue lag {lag * 1e3:.2f} ms exceeds {max_lag * 1e3:.2f} ms",
        )
    unsent = counts.not_issued + sum(
        1 for r in run.records if r.status is RecordStatus.CANCELLED and r.sent_s is None
    )
    if unsent:
        fail(
            ReasonCode.RUN_TOO_SHORT,
            f"{unsent} of {counts.planned} planned requests were never sent (deadline)",
        )
    last = max((r.scheduled_s for r in run.records if r.sent_s is not None), default=0.0)
    if policy.min_duration_s is not None and last < policy.min_duration_s:
        fail(
            ReasonCode.RUN_TOO_SHORT,
            f"last issued request was scheduled at {last:.1f} s, "
            f"policy minimum is {policy.min_duration_s:.1f} s",
        )
    if policy.min_count is not None and counts.issued < policy.min_count:
        fail(
            ReasonCode.RUN_TOO_SHORT,
            f"{counts.issued} requests issued, policy minimum is {policy.min_count}",
        )
    if rates.issue_fidelity < policy.min_issue_fidelity:
        fail(
            ReasonCode.RATE_BELOW_BOUND,
            f"achieved issue rate {rates.achieved_issue:.3f}/s is "
            f"{rates.issue_fidelity:.4f} of the planned {rates.planned:.3f}/s "
            f"(bound {policy.min_issue_fidelity})",
        )
    bound = policy.min_completion_ratio
    if bound is not None and rates.completion_ratio < bound:
        fail(
            ReasonCode.RATE_BELOW_BOUND,
            f"achieved completion rate {rates.achieved_completion:.3f}/s is "
            f"{rates.completion_ratio:.4f} of the offered {rates.offered:.3f}/s (bound {bound})",
        )
    verdict = Verdict.INVALID if reasons else Verdict.VALID
    return Validity(verdict, tuple(reasons))


def summarize_run(run: LoadRun, policy: ValidityPolicy | None = None) -> RunSummary:
    policy = policy or ValidityPolicy()
    counts = _counts(run)
    effective, requested = run.effective, run.requested
    duration = effective.actual_duration_s
    rates = RateSummary(
        offered=requested.rate if requested.rate is not None else requested.planned_rate,
        planned=requested.planned_rate,
        achieved_issue=effective.achieved_issue_rate,
        achieved_completion=effective.achieved_completion_rate,
        throughput_ok=counts.ok / duration if duration > 0 else 0.0,
    )
    ok = [r for r in run.records if r.status is RecordStatus.OK]
    pcts, conf = policy.claimed_percentiles, policy.confidence

    def metric(name: str, values: Sequence[float | None]) -> MetricSummary:
        present = [v for v in values if v is not None]
        return summarize_values(name, present, pcts, confidence=conf)

    latency = metric("latency_from_schedule", [r.latency_from_schedule_s for r in ok])
    return RunSummary(
        counts=counts,
        rates=rates,
        latency_from_schedule=latency,
        latency_from_send=metric("latency_from_send", [r.latency_from_send_s for r in ok]),
        issue_lag=metric("issue_lag", [r.issue_lag_s for r in run.records]),
        slot_wait=metric("slot_wait", [r.slot_wait_s for r in run.records]),
        max_certifiable_percentile=max_certifiable_percentile(counts.ok, confidence=conf),
        validity=_judge(run, counts, rates, latency, policy),
    )
