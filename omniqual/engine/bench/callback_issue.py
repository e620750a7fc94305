"""The bench's issue path for request/answer endpoints: no task, coroutine or future per request.

The generic issuer (``loadgen.issuer``) starts a task per request, and its ``Send`` awaits a
future with a timeout timer of its own; at a few hundred requests a second that bookkeeping is
most of a client's CPU. Here one chain of loop timers walks the schedule: at each slot a plain
callback writes the request's prepared bytes on an idle keep-alive connection (``Http1Pool``),
and the connection's parser callback stamps the end and judges the answer. Per request that is
two callbacks, no awaitable. Timeouts are swept once a second instead of a timer per request.

What it does not do, and who does: async video jobs (create, poll, download) and an in-flight
cap stay on the generic issuer (``BenchSession`` routes them there). The run it returns is built
by ``loadgen.issuer.assemble_run``, exactly as the generic issuer's: same records, same
requested/effective settings, same summary downstream.

Rare paths may still make a task: opening a connection (none idle: the first requests, or more
in flight than ever before) and resending once on a fresh connection a request whose reused
connection the server had already closed (as ``Http1Pool.send`` does).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Sequence
from functools import partial

from omniqual.client.http1_pool import Http1Answer, Http1Connection, Http1Error, Http1Pool
from omniqual.loadgen.issuer import IssuerSettings, assemble_run, check_plan
from omniqual.loadgen.records import (
    LoadRun,
    OutcomeStatus,
    RecordStatus,
    RequestRecord,
    SendOutcome,
)
from omniqual.loadgen.schedule import Schedule
from omniqual.loadgen.workload import EndpointKind, PlannedRequest

Prepare = Callable[[PlannedRequest], bytes]
Judge = Callable[[EndpointKind, int, str, bytes], SendOutcome]
Done = Callable[[int], None]
"""Told the number of requests finished so far, after each one (a progress bar)."""

_STATUS_OF = {
    OutcomeStatus.OK: RecordStatus.OK,
    OutcomeStatus.ERROR: RecordStatus.ERROR,
    OutcomeStatus.ABORTED: RecordStatus.ABORTED,
    OutcomeStatus.TIMEOUT: RecordStatus.TIMEOUT,
}
SWEEP_S = 1.0
_now = time.monotonic
"""Stamps. The loop's clock is the same CLOCK_MONOTONIC (asyncio's ``loop.time`` is
``time.monotonic``; uvloop's is libuv's, in whole milliseconds), so slots are armed on the loop
and stamped here to the microsecond. uvloop rounds a timer to the nearest millisecond: a send
may be stamped up to half a millisecond before its slot, and it is recorded as it happened."""


class _CallbackRun:
    """Mutable state of one run; lives only inside :func:`issue_by_callbacks`."""

    def __init__(self, pool: Http1Pool, plan: Sequence[PlannedRequest], prepare: Prepare,
                 judge: Judge, done: Done, timeout_s: float) -> None:  # fmt: skip
        self.pool, self.plan, self.prepare, self.judge, self.done = pool, plan, prepare, judge, done
        self.timeout_s = timeout_s
        self.loop = asyncio.get_running_loop()
        self.t0 = 0.0
        self.sent: list[float | None] = [None] * len(plan)
        self.records: list[RequestRecord | None] = [None] * len(plan)
        self.in_flight: dict[int, Http1Connection | None] = {}  # None: still connecting
        self.max_in_flight = 0
        self.finished_count = 0
        self.fired = 0
        self.next_payload: bytes | None = None
        self.over: asyncio.Future[None] = self.loop.create_future()
        self.tasks: set[asyncio.Task[None]] = set()

    # -- issuing
    def fire(self, index: int) -> None:
        """The slot of request ``index`` has come: send it, then arm the next slot's timer."""
        if index < self.fired:  # the run is over (deadline, cancelled caller): a stale timer
            return
        loop = self.loop
        payload = self.next_payload if self.next_payload is not None else self.prepare(
            self.plan[index])  # fmt: skip
        now = _now() - self.t0
        self.sent[index] = now
        self.fired = index + 1
        self.in_flight[index] = None
        self.max_in_flight = max(self.max_in_flight, len(self.in_flight))
        connection = self.pool.idle_connection()
        if connection is None:
            self._spawn(self._send_fresh(index, payload))
        else:
            self._send_on(connection, index, payload, retry=True)
        following = index + 1
        if following < len(self.plan):
            loop.call_at(self.t0 + self.plan[following].offset_s, self.fire, following)
            # Built now, between slots, so the next send is only a write.
            self.next_payload = self.prepare(self.plan[following])
        else:
            self.next_payload = None
            self._maybe_over()

    def _send_on(self, connection: Http1Connection, index: int, payload: bytes, *,
                 retry: bool) -> None:  # fmt: skip
        self.in_flight[index] = connection
        connection.send(payload, partial(self._settled, index, payload, retry))

    async def _send_fresh(self, index: int, payload: bytes) -> None:
        try:
            connection = await self.pool.connect()
        except Http1Error as error:
            self._record(index, SendOutcome(OutcomeStatus.ERROR, None, error.kind))
            return
        if index in self.in_flight:  # not timed out or cancelled while connecting
            self._send_on(connection, index, payload, retry=False)
        else:
            connection.close()

    def _spawn(self, work: Coroutine[None, None, None]) -> None:
        task = self.loop.create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    # -- answers
    def _settled(self, index: int, payload: bytes, retry: bool,
                 result: Http1Answer | Http1Error) -> None:  # fmt: skip
        if index not in self.in_flight:  # already timed out or cancelled
            return
        if isinstance(result, Http1Error):
            if retry and result.kind == "stale_connection":
                self.in_flight[index] = None
                self._spawn(self._send_fresh(index, payload))
                return
            outcome = SendOutcome(OutcomeStatus.ERROR, None, result.kind)
        else:
            content_type = result.content_type.lower()
            outcome = self.judge(self.plan[index].endpoint, result.status, content_type,
                                 result.body)  # fmt: skip
        self._record(index, outcome)

    def _record(self, index: int, outcome: SendOutcome, status: RecordStatus | None = None) -> None:
        self.in_flight.pop(index, None)
        planned, sent = self.plan[index], self.sent[index]
        self.records[index] = RequestRecord(
            index, planned.entry, status or _STATUS_OF[outcome.status], planned.offset_s, sent,
            sent, _now() - self.t0, False, outcome.status_code, outcome.error_kind,
            outcome.server_timings_s, outcome.peak_memory_mb,
        )  # fmt: skip
        self.finished_count += 1
        self.done(self.finished_count)
        self._maybe_over()

    def _maybe_over(self) -> None:
        if self.fired == len(self.plan) and not self.in_flight and not self.over.done():
            self.over.set_result(None)

    # -- timeouts and the deadline
    def sweep(self) -> None:
        """Time out requests older than the timeout; re-arm while the run lasts."""
        now = _now() - self.t0
        expired = [i for i in self.in_flight if now - _sent(self.sent[i]) > self.timeout_s]
        for index in expired:
            self._drop(index, SendOutcome(OutcomeStatus.TIMEOUT, None, "timeout"))
        if not self.over.done():
            self.loop.call_later(SWEEP_S, self.sweep)

    def cancel_all(self) -> None:
        """The deadline: whatever is in flight ends as cancelled, nothing more is issued."""
        self.fired = len(self.plan)  # the chain's next timer may still come: ``fire`` ignores it
        for index in list(self.in_flight):
            self._drop(index, SendOutcome(OutcomeStatus.ERROR, None, "deadline"),
                       RecordStatus.CANCELLED)  # fmt: skip
        self._maybe_over()

    def _drop(self, index: int, outcome: SendOutcome, status: RecordStatus | None = None) -> None:
        connection = self.in_flight.get(index)
        self._record(index, outcome, status)
        if connection is not None:
            connection.close()  # its answer may still come: never reuse it


async def issue_by_callbacks(
    pool: Http1Pool, plan: Sequence[PlannedRequest], schedule: Schedule, prepare: Prepare,
    judge: Judge, settings: IssuerSettings, *, timeout_s: float, done: Done = lambda _n: None,
) -> LoadRun:  # fmt: skip
    """Issue ``plan`` open-loop over ``pool``: ``prepare`` makes a request's bytes, ``judge`` its
    outcome from the answer. ``settings.in_flight_cap`` and ``stop_when`` are not supported
    here (use ``loadgen.issuer.issue``)."""
    if settings.in_flight_cap is not None or settings.stop_when is not None:
        raise ValueError("the callback issue path takes no in-flight cap and no stop_when")
    check_plan(plan, schedule)
    run = _CallbackRun(pool, plan, prepare, judge, done, timeout_s)
    loop = run.loop
    run.t0 = loop.time() + settings.start_delay_s
    started_at_unix = time.time() + settings.start_delay_s
    handles = []
    if plan:
        run.next_payload = prepare(plan[0])
        handles.append(loop.call_at(run.t0 + plan[0].offset_s, run.fire, 0))
    else:
        run.over.set_result(None)
    handles.append(loop.call_later(SWEEP_S, run.sweep))
    if settings.deadline_s is not None:
        handles.append(loop.call_at(run.t0 + settings.deadline_s, run.cancel_all))
    try:
        await run.over
    finally:
        run.fired = len(plan)
        for handle in handles:
            handle.cancel()
        for task in tuple(run.tasks):
            task.cancel()
        for index in list(run.in_flight):  # our caller was cancelled: leave nothing behind
            run._drop(index, SendOutcome(OutcomeStatus.ERROR, None, "cancelled"),
                      RecordStatus.CANCELLED)  # fmt: skip
    return assemble_run(plan, schedule, settings, run.records, end_s=_now() - run.t0,
                        max_in_flight=run.max_in_flight,
                        started_at_unix=started_at_unix)  # fmt: skip


def _sent(value: float | None) -> float:
    assert value is not None  # set before a request enters ``in_flight``
    return value
