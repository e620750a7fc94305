"""``stop_when``: the issuer stops issuing once it holds; the run covers the issued prefix."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from omniqual.loadgen.issuer import IssuerSettings, issue
from omniqual.loadgen.records import OutcomeStatus, RecordStatus, SendOutcome
from omniqual.loadgen.schedule import constant_schedule
from omniqual.loadgen.workload import PlannedRequest, WorkloadSpec, plan_requests

Runner = Callable[[Coroutine[Any, Any, Any]], Any]
_SPEC = WorkloadSpec.model_validate(
    {"name": "w", "entries": [{"name": "img", "task": "t2i", "endpoint": "image", "weight": 1}]}
)


def test_a_stopped_run_covers_its_issued_prefix_and_drains_what_is_in_flight(
    run_virtual: Runner,
) -> None:
    answered: list[int] = []

    async def send(planned: PlannedRequest, /) -> SendOutcome:
        await asyncio.sleep(2.5)  # slower than the 1 s spacing: requests overlap
        answered.append(planned.index)
        return SendOutcome(OutcomeStatus.OK, status_code=200)

    schedule = constant_schedule(1.0, count=20)
    settings = IssuerSettings(stop_when=lambda: len(answered) >= 5)
    run = run_virtual(issue(plan_requests(_SPEC, schedule), schedule, send, settings))
    # Five answered by the slot of request 7 (t = 7 s: requests 0..4 end at 2.5..6.5 s); the
    # two then in flight (5, 6) complete; nothing after is issued or recorded.
    assert [r.index for r in run.records] == list(range(7))
    assert all(r.status is RecordStatus.OK for r in run.records)
    assert run.requested.planned_count == 7
    assert run.requested.window_s == schedule.offsets_s[6]
    assert run.effective.issued == 7
    assert run.effective.achieved_issue_rate == run.requested.planned_rate


def test_without_stop_when_every_request_is_issued(run_virtual: Runner) -> None:
    async def send(planned: PlannedRequest, /) -> SendOutcome:
        return SendOutcome(OutcomeStatus.OK, status_code=200)

    schedule = constant_schedule(1.0, count=12)
    run = run_virtual(issue(plan_requests(_SPEC, schedule), schedule, send, IssuerSettings()))
    assert len(run.records) == 12 and run.requested.planned_count == 12
