"""Bounded search for the highest offered rate whose latency percentile still meets an SLO.

Rates grow geometrically from ``start_rate`` until a probe fails (or shrink until one passes),
then bisect the bracket until it is narrower than ``precision`` or the probe budget is spent.
A probe passes when the SLO is *certified* LoadGen Server-style (failures count as over the
bound, see ``sufficiency.certify_slo``) and the client issued its schedule faithfully; a probe
the client could not issue on time is recorded as client-limited rather than blamed on the server.
Every probe is kept in the result.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from omniqual.loadgen.records import LoadRun, RecordStatus
from omniqual.loadgen.sufficiency import DEFAULT_CONFIDENCE, SloCertificate, certify_slo

logger = logging.getLogger(__name__)

Probe = Callable[[float], Awaitable[LoadRun]]


class SloTarget(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    percentile: float = Field(gt=0, lt=100)
    bound_s: float = Field(gt=0)
    confidence: float = Field(default=DEFAULT_CONFIDENCE, gt=0, lt=1)


class SearchSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    start_rate: float = Field(gt=0)
    min_rate: float = Field(gt=0)
    max_rate: float = Field(gt=0)
    growth: float = Field(default=2.0, gt=1)
    precision: float = Field(default=0.05, gt=0, description="stop when high/low - 1 <= this")
    max_probes: int = Field(default=12, ge=1)
    min_issue_fidelity: float = Field(default=0.99, ge=0, le=1)


class ProbeVerdict(StrEnum):
    PASS = "pass"
    FAIL = "fail"  # SLO not certified: too slow, too many failures, or too few samples
    CLIENT_LIMITED = "client_limited"  # the issuer fell behind its own schedule


@dataclass(frozen=True, slots=True)
class ProbeRecord:
    rate: float
    verdict: ProbeVerdict
    certificate: SloCertificate
    issue_fidelity: float
    run: LoadRun


class StopReason(StrEnum):
    CONVERGED = "converged"
    PROBE_BUDGET = "probe_budget"
    MAX_RATE_PASSES = "max_rate_passes"
    MIN_RATE_FAILS = "min_rate_fails"
    CLIENT_LIMITED = "client_limited"


@dataclass(frozen=True, slots=True)
class SaturationResult:
    slo: SloTarget
    probes: tuple[ProbeRecord, ...]
    best_rate: float | None  # highest passing rate probed
    lowest_failing_rate: float | None
    stop_reason: StopReason


def judge_probe(run: LoadRun, rate: float, slo: SloTarget, min_fidelity: float) -> ProbeRecord:
    latencies = [
        value
        for r in run.records
        if r.status is RecordStatus.OK and (value := r.latency_from_schedule_s) is not None
    ]
    failures = sum(1 for r in run.records if r.status is not RecordStatus.OK)
    certificate = certify_slo(
        latencies, slo.percentile, slo.bound_s, failures=failures, confidence=slo.confidence
    )
    planned = run.requested.planned_rate
    fidelity = run.effective.achieved_issue_rate / planned if planned > 0 else 0.0
    if fidelity < min_fidelity:
        verdict = ProbeVerdict.CLIENT_LIMITED
    elif certificate.certified:
        verdict = ProbeVerdict.PASS
    else:
        verdict = ProbeVerdict.FAIL
    return ProbeRecord(rate, verdict, certificate, fidelity, run)


async def find_saturation(
    probe: Probe, slo: SloTarget, settings: SearchSettings
) -> SaturationResult:
    """Search for the knee; ``probe(rate)`` must run a fresh load at ``rate`` and return it."""
    probes: list[ProbeRecord] = []
    passing: float | None = None
    failing: float | None = None

    async def run_at(rate: float) -> ProbeVerdict:
        nonlocal passing, failing
        record = judge_probe(await probe(rate), rate, slo, settings.min_issue_fidelity)
        probes.append(record)
        logger.info("saturation probe %.4g/s: %s", rate, record.verdict)
        if record.verdict is ProbeVerdict.PASS:
            passing = rate if passing is None else max(passing, rate)
        elif record.verdict is ProbeVerdict.FAIL:
            failing = rate if failing is None else min(failing, rate)
        return record.verdict

    def result(reason: StopReason) -> SaturationResult:
        return SaturationResult(slo, tuple(probes), passing, failing, reason)

    rate = min(max(settings.start_rate, settings.min_rate), settings.max_rate)
    # Phase 1: bracket the knee geometrically.
    while passing is None or failing is None:
        if len(probes) >= settings.max_probes:
            return result(StopReason.PROBE_BUDGET)
        verdict = await run_at(rate)
        if verdict is ProbeVerdict.CLIENT_LIMITED:
            return result(StopReason.CLIENT_LIMITED)
        if verdict is ProbeVerdict.PASS and failing is None:
            if rate >= settings.max_rate:
                return result(StopReason.MAX_RATE_PASSES)
            rate = min(rate * settings.growth, settings.max_rate)
        elif verdict is ProbeVerdict.FAIL and passing is None:
            if rate <= settings.min_rate:
                return result(StopReason.MIN_RATE_FAILS)
            rate = max(rate / settings.growth, settings.min_rate)
    # Phase 2: bisect between the highest pass and the lowest fail.
    while failing / passing - 1 > settings.precision:
        if len(probes) >= settings.max_probes:
            return result(StopReason.PROBE_BUDGET)
        if await run_at((passing + failing) / 2) is ProbeVerdict.CLIENT_LIMITED:
            return result(StopReason.CLIENT_LIMITED)
    return result(StopReason.CONVERGED)
