"""Open-loop issuing: every planned request starts at its scheduled time, whatever completions do.

A dispatcher sleeps to each request's slot and starts one task for it there; the task sends at
once, so a slow completion can never delay a later issue (it runs in its own task). Waking once
per slot, not twice (no lookahead task that sleeps again), halves the timer wake-ups per request,
which is most of an idle loop's cost per request at a few hundred per second. An optional
in-flight cap makes tasks queue for a slot, and that wait is recorded per request (it is part of
latency-from-schedule, never hidden). A hard deadline cancels whatever is still pending.

Timing floor: asyncio on Linux waits in epoll, whose timeout Python rounds up to whole
milliseconds, so on an idle core a request starts 0 to ~1.1 ms after its slot; more than that
means the event loop (usually the Send's own CPU work) or the machine is saturated, which the
recorded issue lag shows and ``stats`` turns into an INVALID verdict past its threshold.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from omniqual.loadgen.records import (
    EffectiveLoad,
    LoadRun,
    OutcomeStatus,
    RecordStatus,
    RequestedLoad,
    RequestRecord,
    SendOutcome,
)
from omniqual.loadgen.schedule import Schedule
from omniqual.loadgen.workload import PlannedRequest

logger = logging.getLogger(__name__)


class Send(Protocol):
    """Performs one request; must be cancellation-safe (the deadline cancels it)."""

    async def __call__(self, planned: PlannedRequest, /) -> SendOutcome: ...


@dataclass(frozen=True, slots=True)
class IssuerSettings:
    in_flight_cap: int | None = None
    deadline_s: float | None = None  # hard stop, seconds after the run start
    start_delay_s: float = 0.02  # run start = now + this, so the first slots are not late
    stop_when: Callable[[], bool] | None = None
    """Asked before each issue: once it holds, nothing more is issued, what is in flight
    completes, and the run covers the issued prefix of the plan (its window ends at the last
    issued slot), e.g. a phase that already holds enough samples."""

    def __post_init__(self) -> None:
        if self.in_flight_cap is not None and self.in_flight_cap < 1:
            raise ValueError("in_flight_cap must be at least 1")
        if self.deadline_s is not None and self.deadline_s <= 0:
            raise ValueError("deadline_s must be positive")
        if self.start_delay_s < 0:
            raise ValueError("start_delay_s must not be negative")


_STATUS_OF = {
    OutcomeStatus.OK: RecordStatus.OK,
    OutcomeStatus.ERROR: RecordStatus.ERROR,
    OutcomeStatus.ABORTED: RecordStatus.ABORTED,
    OutcomeStatus.TIMEOUT: RecordStatus.TIMEOUT,
}


class _Run:
    """Mutable state of one run; lives only inside :func:`issue`."""

    def __init__(self, send: Send, settings: IssuerSettings, count: int) -> None:
        self.send = send
        self.loop = asyncio.get_running_loop()
        self.cap = asyncio.Semaphore(settings.in_flight_cap) if settings.in_flight_cap else None
        self.records: list[RequestRecord | None] = [None] * count
        self.tasks: set[asyncio.Task[None]] = set()
        self.in_flight = 0
        self.max_in_flight = 0
        self.t0 = 0.0
        self.cut: int | None = None  # how many were issued when ``stop_when`` held

    async def one(self, planned: PlannedRequest, dispatched: float) -> None:
        """Send ``planned`` now (its slot has come; ``dispatched`` is when, from the run start).
        A task cancelled before its first step never runs this: it stays NOT_ISSUED."""
        loop, t0 = self.loop, self.t0
        sent: float | None = None
        waited = False
        try:
            if self.cap is not None:
                waited = self.cap.locked()
                await self.cap.acquire()
            sent = loop.time() - t0
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            try:
                outcome = await self.send(planned)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a Send bug or transport failure is an outcome, not a crash
                logger.debug("send raised for request %d: %s", planned.index, type(exc).__name__)
                outcome = SendOutcome(OutcomeStatus.ERROR, error_kind=type(exc).__name__)
            finally:
                self.in_flight -= 1
                if self.cap is not None:
                    self.cap.release()
            if not isinstance(outcome, SendOutcome):  # a Send breaking its contract
                outcome = SendOutcome(OutcomeStatus.ERROR, error_kind="invalid_send_outcome")
            self.records[planned.index] = RequestRecord(
                planned.index,
                planned.entry,
                _STATUS_OF[outcome.status],
                planned.offset_s,
                dispatched,
                sent,
                loop.time() - t0,
                waited,
                outcome.status_code,
                outcome.error_kind,
                outcome.server_timings_s,
                outcome.peak_memory_mb,
            )
        except asyncio.CancelledError:
            self.records[planned.index] = RequestRecord(
                planned.index,
                planned.entry,
                RecordStatus.CANCELLED,
                planned.offset_s,
                dispatched,
                sent,
                loop.time() - t0,
                waited,
                error_kind="deadline",
            )
            raise

    async def dispatch(self, plan: Sequence[PlannedRequest], settings: IssuerSettings) -> None:
        loop = self.loop
        for planned in plan:
            if settings.deadline_s is not None and planned.offset_s >= settings.deadline_s:
                return
            delay = self.t0 + planned.offset_s - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            if settings.stop_when is not None and planned.index > 0 and settings.stop_when():
                self.cut = planned.index
                return
            task = loop.create_task(self.one(planned, loop.time() - self.t0))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def drive(self, plan: Sequence[PlannedRequest], settings: IssuerSettings) -> None:
        await self.dispatch(plan, settings)
        while self.tasks:
            await asyncio.wait(tuple(self.tasks))


def check_plan(plan: Sequence[PlannedRequest], schedule: Schedule) -> None:
    if len(plan) != len(schedule):
        raise ValueError(f"plan has {len(plan)} requests, schedule {len(schedule)} slots")
    for position, planned in enumerate(plan):
        if planned.index != position:
            raise ValueError(f"plan position {position} holds request index {planned.index}")
        if position and planned.offset_s < plan[position - 1].offset_s:
            raise ValueError(f"plan offsets decrease at position {position}")


async def issue(
    plan: Sequence[PlannedRequest],
    schedule: Schedule,
    send: Send,
    settings: IssuerSettings | None = None,
) -> LoadRun:
    """Issue ``plan`` open-loop through ``send`` and return every request's record."""
    settings = settings or IssuerSettings()
    check_plan(plan, schedule)
    run = _Run(send, settings, len(plan))
    loop = run.loop
    run.t0 = loop.time() + settings.start_delay_s
    started_at_unix = time.time() + settings.start_delay_s
    try:
        if settings.deadline_s is None:
            await run.drive(plan, settings)
        else:
            timeout = run.t0 + settings.deadline_s - loop.time()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(run.drive(plan, settings), timeout)
    finally:
        # Reached on the deadline and also if our caller cancels us: leave no task behind.
        pending = tuple(run.tasks)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    end = loop.time() - run.t0
    return assemble_run(plan, schedule, settings, run.records, end_s=end,
                        max_in_flight=run.max_in_flight, started_at_unix=started_at_unix,
                        cut=run.cut)  # fmt: skip


def assemble_run(
    plan: Sequence[PlannedRequest], schedule: Schedule, settings: IssuerSettings,
    records: Sequence[RequestRecord | None], *, end_s: float, max_in_flight: int,
    started_at_unix: float, cut: int | None = None,
) -> LoadRun:  # fmt: skip
    """The run an issuer produced: ``records`` by plan index (None: never issued), ``end_s``
    from the run start, ``cut`` the issued prefix when ``stop_when`` ended it early. Every
    issuer (this one, the bench's callback path) reports its run through here."""
    if cut is not None:
        plan, schedule = _issued_prefix(plan, schedule, cut)
        records = records[:cut]
    whole = tuple(
        record
        if record is not None
        else RequestRecord(
            p.index, p.entry, RecordStatus.NOT_ISSUED, p.offset_s, None, None, None, False
        )
        for p, record in zip(plan, records, strict=True)
    )
    requested = RequestedLoad(
        schedule.pattern,
        schedule.rate,
        schedule.cv,
        schedule.duration_s,
        schedule.count,
        schedule.seed,
        len(schedule),
        schedule.window_s,
        settings.in_flight_cap,
        settings.deadline_s,
    )
    return LoadRun(
        requested, _effective(whole, schedule, end_s, max_in_flight), whole, started_at_unix
    )


def _issued_prefix(
    plan: Sequence[PlannedRequest], schedule: Schedule, cut: int
) -> tuple[Sequence[PlannedRequest], Schedule]:
    """The plan and schedule a run stopped after ``cut`` issues covered."""
    offsets = schedule.offsets_s[:cut]
    window = offsets[-1] if schedule.duration_s is None else min(schedule.window_s, offsets[-1])
    hints = schedule.trace_hints[:cut]
    return plan[:cut], dataclasses.replace(schedule, offsets_s=offsets, window_s=window,
                                           trace_hints=hints)  # fmt: skip


def _effective(
    records: Sequence[RequestRecord], schedule: Schedule, end_s: float, max_in_flight: int
) -> EffectiveLoad:
    sent = [r.sent_s for r in records if r.sent_s is not None]
    lags = np.array([r.issue_lag_s for r in records if r.issue_lag_s is not None])
    waits = [w for r in records if r.waited_for_slot and (w := r.slot_wait_s) is not None]
    ends = [r.ended_s for r in records if r.ended_s is not None]
    actual = max([end_s, *ends]) if ends else end_s
    responded = sum(1 for r in records if r.responded)
    last_issue = max(sent) if sent else None
    issue_window = max(schedule.window_s, last_issue or 0.0)
    return EffectiveLoad(
        issued=len(sent),
        responded=responded,
        achieved_issue_rate=len(sent) / issue_window if issue_window > 0 else 0.0,
        achieved_completion_rate=responded / actual if actual > 0 else 0.0,
        actual_duration_s=actual,
        last_issue_s=last_issue,
        max_issue_lag_s=float(lags.max()) if lags.size else None,
        p99_issue_lag_s=float(np.percentile(lags, 99)) if lags.size else None,
        waited_for_slot=sum(1 for r in records if r.waited_for_slot),
        total_slot_wait_s=float(sum(waits)),
        max_slot_wait_s=max(waits, default=0.0),
        max_in_flight=max_in_flight,
    )
