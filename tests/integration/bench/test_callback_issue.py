"""The bench's callback issue path (no task per request) against scripted HTTP/1.1 servers on
127.0.0.1: the same run the generic issuer gives for the same plan, and every way a request can
end: answered, refused, an error status, a dropped keep-alive connection (resent once), no
answer within the timeout, the run's deadline, and a cancelled caller. Both event loops."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from omniqual.client.http1_pool import Http1Pool
from omniqual.engine.bench import callback_issue
from omniqual.engine.bench.callback_issue import issue_by_callbacks
from omniqual.engine.bench.transport import Http1Send, judge
from omniqual.loadgen.issuer import IssuerSettings, issue
from omniqual.loadgen.records import LoadRun, RecordStatus
from omniqual.loadgen.schedule import Schedule, constant_schedule
from omniqual.loadgen.workload import PlannedRequest, WorkloadSpec, plan_requests
from tests.integration.client.test_http1_pool import LOOPS, Scripted, run, sized

pytestmark = pytest.mark.integration
SPEC = WorkloadSpec.model_validate({
    "name": "w", "seed": 3,
    "entries": [{"name": "small", "task": "t2i", "endpoint": "image",
                 "weight": 1, "shape": {"width": 64, "height": 64, "steps": 2}}],
})  # fmt: skip


@pytest.fixture(params=sorted(LOOPS))
def loop(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def plan(rate: float, count: int) -> tuple[list[PlannedRequest], Schedule]:
    schedule = constant_schedule(rate, count=count)
    return list(plan_requests(SPEC, schedule)), schedule


async def by_callbacks(pool: Http1Pool, rate: float, count: int, *, timeout_s: float = 5.0,
                       deadline_s: float | None = None, done: list[int] | None = None,
                       ) -> LoadRun:  # fmt: skip
    planned, schedule = plan(rate, count)
    send = Http1Send(pool_url(pool))
    seen = done if done is not None else []
    return await issue_by_callbacks(
        pool, planned, schedule, send.prepare, judge, IssuerSettings(deadline_s=deadline_s),
        timeout_s=timeout_s, done=seen.append,
    )  # fmt: skip


def pool_url(pool: Http1Pool) -> str:
    return f"http://{pool.host}:{pool.port}"


def statuses(load: LoadRun) -> list[tuple[RecordStatus, str | None]]:
    return [(r.status, r.error_kind) for r in load.records]


def test_answers_are_recorded_as_the_generic_issuer_records_them(loop: str) -> None:
    server = Scripted(lambda _n: sized())
    done: list[int] = []

    async def both(pool: Http1Pool) -> tuple[LoadRun, LoadRun]:
        fast = await by_callbacks(pool, 200.0, 40, done=done)
        planned, schedule = plan(200.0, 40)
        async with Http1Send(pool_url(pool)) as send:
            generic = await issue(planned, schedule, send, IssuerSettings())
        return fast, generic

    fast, generic = run(loop, server, both)
    assert statuses(fast) == statuses(generic) == [(RecordStatus.OK, None)] * 40
    assert fast.requested == generic.requested
    assert done == list(range(1, 41))
    for record in fast.records:
        assert record.sent_s is not None and record.ended_s is not None
        # uvloop arms timers to the nearest millisecond: a send may be a hair early.
        assert record.dispatched_s == record.sent_s >= record.scheduled_s - 1e-3
        assert record.ended_s >= record.sent_s and record.status_code == 200
    assert fast.effective.issued == fast.effective.responded == 40
    # At 200/s against an instant server the connection is kept alive: without keep-alive
    # every request would open one. (A loaded host may open a few more when an answer is
    # still on its way at the next slot, so the bound is a fraction, not one.)
    assert server.connections <= 40 // 4
    body = server.requests[0].partition(b"\r\n\r\n")[2]
    assert b'"seed"' in body and b'"size": "64x64"' in body


def test_error_statuses_refusals_and_empty_output_are_errors_with_their_kind(loop: str) -> None:
    answers = iter([b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n\r\n",
                    sized(b'{"data":[]}')])  # fmt: skip
    errors = run(loop, Scripted(lambda _n: next(answers)), lambda p: by_callbacks(p, 100.0, 2))
    assert statuses(errors) == [(RecordStatus.ERROR, "http_500"),
                                (RecordStatus.ERROR, "empty_output")]  # fmt: skip
    refused = run(loop, None, lambda p: by_callbacks(p, 100.0, 3))
    assert statuses(refused) == [(RecordStatus.ERROR, "connect_error")] * 3


def test_a_kept_alive_connection_the_server_dropped_is_resent_once_on_a_fresh_one(
    loop: str,
) -> None:
    server = Scripted(lambda _n: sized(), close_after=1)  # closes silently after each answer
    load = run(loop, server, lambda p: by_callbacks(p, 20.0, 4))
    assert statuses(load) == [(RecordStatus.OK, None)] * 4
    assert server.connections == 4 and len(server.requests) == 4


def test_no_answer_within_the_timeout_is_a_timeout_and_frees_nothing_for_reuse(
    loop: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(callback_issue, "SWEEP_S", 0.05)
    connections = 0

    async def first_silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        if connections == 1:
            await reader.read()  # holds the request, never answers
        else:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(sized(extra=b"connection: close\r\n"))
            await writer.drain()
        writer.close()

    async def scenario() -> LoadRun:
        listener = await asyncio.start_server(first_silent, "127.0.0.1", 0)
        pool = Http1Pool(f"http://127.0.0.1:{listener.sockets[0].getsockname()[1]}")
        try:
            return await by_callbacks(pool, 50.0, 2, timeout_s=0.2)
        finally:
            await pool.aclose()
            listener.close()

    with asyncio.Runner(loop_factory=LOOPS[loop]) as runner:
        load = runner.run(scenario())
    assert (load.records[0].status, load.records[0].error_kind) == (RecordStatus.TIMEOUT,
                                                                    "timeout")  # fmt: skip
    assert load.records[1].status is RecordStatus.OK  # on a connection of its own
    assert connections == 2


def test_the_deadline_cancels_what_is_in_flight_and_issues_nothing_more(loop: str) -> None:
    async def hang(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # never answers
        writer.close()

    async def scenario() -> LoadRun:
        listener = await asyncio.start_server(hang, "127.0.0.1", 0)
        pool = Http1Pool(f"http://127.0.0.1:{listener.sockets[0].getsockname()[1]}")
        try:
            return await by_callbacks(pool, 10.0, 10, deadline_s=0.25)
        finally:
            await pool.aclose()
            listener.close()

    with asyncio.Runner(loop_factory=LOOPS[loop]) as runner:
        load = runner.run(scenario())
    issued = [r for r in load.records if r.status is not RecordStatus.NOT_ISSUED]
    assert 2 <= len(issued) <= 4  # slots at 0, 0.1, 0.2 s (and the deadline's own tick)
    assert all((r.status, r.error_kind) == (RecordStatus.CANCELLED, "deadline") for r in issued)
    assert load.records[-1].status is RecordStatus.NOT_ISSUED


def test_a_cancelled_caller_leaves_no_task_and_no_connection_behind(loop: str) -> None:
    async def hang(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()
        writer.close()

    async def scenario() -> tuple[int, int]:
        listener = await asyncio.start_server(hang, "127.0.0.1", 0)
        pool = Http1Pool(f"http://127.0.0.1:{listener.sockets[0].getsockname()[1]}")
        task = asyncio.ensure_future(by_callbacks(pool, 50.0, 5))
        await asyncio.sleep(0.15)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.05)
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        listener.close()
        return len(others), len(pool._open)

    with asyncio.Runner(loop_factory=LOOPS[loop]) as runner:
        assert runner.run(scenario()) == (0, 0)


def test_a_cap_or_stop_rule_is_refused_not_ignored() -> None:
    planned, schedule = plan(10.0, 1)

    async def attempt(settings: IssuerSettings) -> Any:
        pool = Http1Pool("http://127.0.0.1:9")
        return await issue_by_callbacks(pool, planned, schedule, lambda _p: b"", judge, settings,
                                        timeout_s=1.0)  # fmt: skip

    for settings in (IssuerSettings(in_flight_cap=2), IssuerSettings(stop_when=lambda: True)):
        with pytest.raises(ValueError, match="no in-flight cap and no stop_when"):
            asyncio.run(attempt(settings))
