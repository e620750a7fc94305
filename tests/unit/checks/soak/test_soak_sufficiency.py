"""Soak phases ended by sample sufficiency, on a virtual clock (no sockets, no real time):
early when every claim is certifiable, never before the minimums, invalid when the cap is
reached without enough samples."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from omniqual.checks.soak.judge import PhaseEvidence, judge_phase
from omniqual.checks.soak.params import SoakParams
from omniqual.checks.soak.phases import Calibration, PhaseSufficiency, run_load
from omniqual.loadgen.records import LoadRun, OutcomeStatus, RecordStatus, SendOutcome
from omniqual.loadgen.workload import EndpointKind, PlannedRequest
from tests.unit.loadgen.conftest import _run_virtual  # the virtual-clock loop

CALIBRATION = Calibration(solo_s={"small": 1.0}, weights={"small": 1.0}, failures=())
"""Mean service 1 s: a phase with slo_bound_x_service 5 has a 5 s bound."""


def _params(**phase: Any) -> SoakParams:
    spec = {"name": "below", "factor": 0.5, "requests": 60, "slo_percentile": 90,
            "slo_bound_x_service": 5, "end_when_sufficient": True, **phase}  # fmt: skip
    return SoakParams.model_validate({
        "shapes": [{"name": "small", "width": 64, "height": 64}],
        "phases": [spec],
        "validity": {"confidence": 0.95, "min_phase_requests": 30, "max_p99_issue_lag_s": 0.05},
    })  # fmt: skip


class Send:
    """Answers OK after ``latency(index)`` seconds of virtual time."""

    def __init__(self, latency: Callable[[int], float]) -> None:
        self.latency = latency

    async def __call__(self, planned: PlannedRequest, /) -> SendOutcome:
        await asyncio.sleep(self.latency(planned.index))
        return SendOutcome(OutcomeStatus.OK, status_code=200)


def _phase(params: SoakParams, send: Send, rate: float) -> LoadRun:
    spec = params.phases[0]
    run: LoadRun = _run_virtual(run_load(
        send, params, EndpointKind.IMAGE, rate=rate, count=spec.requests, seed=7, injected=False,
        phase=spec, calibration=CALIBRATION,
    ))  # fmt: skip
    return run


def _judged(params: SoakParams, run: LoadRun) -> list[str]:
    spec = params.phases[0]
    evidence = PhaseEvidence(spec, 0.5, run, (), 5.0 * CALIBRATION.mean_service_s)
    found, _ = judge_phase(evidence, params.validity)
    return found.invalid + found.failures


def test_a_phase_ends_once_every_claim_is_certifiable() -> None:
    params = _params()
    run = _phase(params, Send(lambda _i: 0.5), rate=0.5)
    # p90 at 95% needs 29 samples with none over; the policy minimum is 30 measured requests.
    assert 30 <= len(run.records) < 60
    assert all(r.status is RecordStatus.OK for r in run.records)
    assert run.requested.planned_count == len(run.records)
    assert _judged(params, run) == []  # the shorter phase is a valid one


def test_a_phase_is_never_ended_before_its_minimum_duration() -> None:
    params = _params(min_duration_s=90.0)
    run = _phase(params, Send(lambda _i: 0.5), rate=0.5)
    last = max(r.scheduled_s for r in run.records)
    assert last >= 90.0 - 2.0 and len(run.records) < 60  # ended after 90 s, before the cap


def test_a_phase_without_sufficiency_runs_to_its_cap_and_stays_invalid() -> None:
    params = _params(requests=40)
    # Two requests over the 5 s bound while p90 itself is under it: 40 samples with 2 overs
    # cannot certify p90 <= 5 s at 95% (that needs 61), so the phase runs to its cap and is
    # invalid, as a fixed-length phase would be.
    run = _phase(params, Send(lambda i: 6.0 if i in (9, 29) else 0.5), rate=0.5)
    assert len(run.records) == 40
    reasons = _judged(params, run)
    assert len(reasons) == 1 and reasons[0].endswith("certifying needs >= 61 samples")


def test_requests_in_flight_count_as_overs_until_they_answer() -> None:
    params = _params()
    now = [0.0]
    tally = PhaseSufficiency(params.phases[0], params.validity, 5.0, clock=lambda: now[0])
    tally.samples = tally.completed = 40
    assert tally.sufficient()
    tally.in_flight = 2  # two unanswered: p90 would need >= 61 samples if both were over
    assert not tally.sufficient()
    tally.in_flight = 0
    tally.overs = 1  # one over among 40: p90 at 95% needs 46
    assert not tally.sufficient()


def test_a_phase_that_does_not_ask_runs_every_planned_request() -> None:
    params = _params(end_when_sufficient=False)
    run = _phase(params, Send(lambda _i: 0.5), rate=0.5)
    assert len(run.records) == 60
