"""Issuer behaviour on a virtual clock: timings are exact, so "on time" means zero lag."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from omniqual.loadgen.issuer import IssuerSettings, issue
from omniqual.loadgen.records import (
    OutcomeStatus,
    RecordRow,
    RecordStatus,
    SendOutcome,
)
from omniqual.loadgen.schedule import Schedule, constant_schedule, poisson_schedule
from omniqual.loadgen.workload import PlannedRequest, WorkloadSpec, plan_requests

Runner = Callable[[Coroutine[Any, Any, Any]], Any]

_SPEC = WorkloadSpec.model_validate(
    {
        "name": "w",
        "entries": [{"name": "img", "task": "t2i", "endpoint": "image", "weight": 1}],
    }
)


class SlowSend:
    """Takes ``seconds`` per request; records the (virtual) time each call started."""

    def __init__(self, seconds: float, outcome: OutcomeStatus = OutcomeStatus.OK) -> None:
        self.seconds = seconds
        self.outcome = outcome
        self.calls: list[int] = []

    async def __call__(self, planned: PlannedRequest) -> SendOutcome:
        self.calls.append(planned.index)
        await asyncio.sleep(self.seconds)
        return SendOutcome(self.outcome, status_code=200, server_timings_s=(("denoise", 0.5),))


def _go(schedule: Schedule, send: Any, settings: IssuerSettings | None = None) -> Any:
    return issue(plan_requests(_SPEC, schedule), schedule, send, settings)


def test_slow_completions_never_delay_later_issues(run_virtual: Runner) -> None:
    schedule = constant_schedule(100.0, count=200)  # one request every 10 ms, each takes 5 s
    run = run_virtual(_go(schedule, SlowSend(5.0)))
    assert [r.status for r in run.records] == [RecordStatus.OK] * 200
    for record in run.records:
        assert record.issue_lag_s == pytest.approx(0.0, abs=1e-9)
        assert record.sent_s == pytest.approx(record.scheduled_s, abs=1e-9)
        assert record.latency_from_schedule_s == pytest.approx(5.0, abs=1e-9)
        assert record.latency_from_send_s == pytest.approx(5.0, abs=1e-9)
    assert run.effective.max_in_flight == 200
    assert run.effective.waited_for_slot == 0
    assert run.effective.achieved_issue_rate == pytest.approx(100.0, rel=1e-6)
    assert run.effective.actual_duration_s == pytest.approx(7.0, abs=1e-6)
    assert run.requested.rate == 100.0 and run.requested.planned_count == 200


def test_in_flight_cap_wait_is_counted_and_charged_to_latency(run_virtual: Runner) -> None:
    schedule = constant_schedule(10.0, count=10)  # every 100 ms; each request takes 250 ms
    run = run_virtual(_go(schedule, SlowSend(0.25), IssuerSettings(in_flight_cap=1)))
    records = run.records
    assert run.effective.max_in_flight == 1
    assert run.effective.waited_for_slot == 9
    assert not records[0].waited_for_slot
    # Send k starts when send k-1 ends: 0.1 + 0.25 k; the queue grows by 150 ms per request.
    for k, record in enumerate(records):
        assert record.issue_lag_s == pytest.approx(0.0, abs=1e-9)
        assert record.sent_s == pytest.approx(0.1 + 0.25 * k, abs=1e-9)
        assert record.slot_wait_s == pytest.approx(0.15 * k, abs=1e-9)
        assert record.latency_from_send_s == pytest.approx(0.25, abs=1e-9)
        assert record.latency_from_schedule_s == pytest.approx(0.25 + 0.15 * k, abs=1e-9)
    assert run.effective.max_slot_wait_s == pytest.approx(1.35, abs=1e-9)
    assert run.effective.total_slot_wait_s == pytest.approx(0.15 * 45, abs=1e-9)
    # The cap made the client late: the last send was 1.35 s after its slot.
    assert run.effective.achieved_issue_rate == pytest.approx(10 / 2.35, rel=1e-6)


def test_deadline_cancels_in_flight_and_leaves_rest_unissued(run_virtual: Runner) -> None:
    schedule = constant_schedule(10.0, count=10)  # slots 0.1 .. 1.0
    send = SlowSend(0.35)
    run = run_virtual(_go(schedule, send, IssuerSettings(deadline_s=0.48, in_flight_cap=2)))
    by_status = {s: [r.index for r in run.records if r.status is s] for s in RecordStatus}
    # 0.1 -> 0.45 ok; 0.2 still in flight; 0.3 got the freed slot at 0.45; 0.4 still waiting.
    assert by_status[RecordStatus.OK] == [0]
    assert by_status[RecordStatus.CANCELLED] == [1, 2, 3]
    assert by_status[RecordStatus.NOT_ISSUED] == [4, 5, 6, 7, 8, 9]
    cancelled = [run.records[i] for i in by_status[RecordStatus.CANCELLED]]
    assert all(r.error_kind == "deadline" and r.latency_from_schedule_s is None for r in cancelled)
    assert run.records[3].sent_s is None and run.records[3].waited_for_slot
    assert run.effective.issued == 3
    assert run.effective.responded == 1
    assert send.calls == [0, 1, 2]


def test_send_exception_and_outcomes_are_recorded(run_virtual: Runner) -> None:
    async def flaky(planned: PlannedRequest) -> SendOutcome:
        await asyncio.sleep(0.01)
        if planned.index % 3 == 0:
            raise ConnectionResetError("peer went away")
        if planned.index % 3 == 1:
            return SendOutcome(OutcomeStatus.TIMEOUT, error_kind="read_timeout")
        return SendOutcome(OutcomeStatus.OK, status_code=200)

    run = run_virtual(_go(constant_schedule(50.0, count=6), flaky))
    assert [r.status for r in run.records] == [
        RecordStatus.ERROR,
        RecordStatus.TIMEOUT,
        RecordStatus.OK,
    ] * 2
    assert run.records[0].error_kind == "ConnectionResetError"
    assert run.records[1].latency_from_schedule_s == pytest.approx(0.01, abs=1e-9)


def test_send_breaking_its_contract_is_an_error_not_a_lost_record(run_virtual: Runner) -> None:
    async def broken(planned: PlannedRequest) -> SendOutcome:
        return None  # type: ignore[return-value]

    run = run_virtual(_go(constant_schedule(10.0, count=2), broken))
    assert [r.status for r in run.records] == [RecordStatus.ERROR] * 2
    assert run.records[0].error_kind == "invalid_send_outcome"


def test_caller_cancellation_leaves_no_task_behind(run_virtual: Runner) -> None:
    send = SlowSend(10.0)

    async def cancel_midway() -> set[asyncio.Task[Any]]:
        task = asyncio.ensure_future(_go(constant_schedule(10.0, count=5), send))
        await asyncio.sleep(0.35)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        leftover = asyncio.all_tasks() - {asyncio.current_task()}
        await asyncio.sleep(20)  # a leaked request task would go on calling send
        return leftover

    leftover = run_virtual(cancel_midway())
    assert leftover == set()
    assert send.calls == [0, 1, 2]


def test_rows_serialize_every_record(run_virtual: Runner) -> None:
    schedule = poisson_schedule(20.0, seed=3, count=25)
    run = run_virtual(_go(schedule, SlowSend(0.2)))
    rows = list(run.rows())
    assert [row.index for row in rows] == list(range(25))
    parsed = RecordRow.model_validate_json(rows[4].model_dump_json())
    assert parsed == rows[4]
    assert parsed.server_timings_s == {"denoise": 0.5}
    assert parsed.latency_from_schedule_s == pytest.approx(0.2, abs=1e-9)


def test_plan_must_match_schedule() -> None:
    schedule = constant_schedule(1.0, count=3)
    plan = plan_requests(_SPEC, schedule)
    with pytest.raises(ValueError, match="plan has 2 requests, schedule 3"):
        asyncio.run(issue(plan[:2], schedule, SlowSend(0)))
    with pytest.raises(ValueError, match="in_flight_cap"):
        IssuerSettings(in_flight_cap=0)


def test_real_loop_smoke() -> None:
    """One short run on the real clock: structure only, no timing assertions."""
    schedule = constant_schedule(200.0, count=20)
    run = asyncio.run(_go(schedule, SlowSend(0.001)))
    assert run.effective.issued == 20
    assert all(r.status is RecordStatus.OK for r in run.records)
    assert all((r.issue_lag_s or 0.0) >= 0 for r in run.records)
