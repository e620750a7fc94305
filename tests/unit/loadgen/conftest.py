"""Fixtures for loadgen unit tests: a virtual-clock event loop and synthetic LoadRun builders.

The virtual clock makes timing assertions exact and instant: whenever the loop would block
waiting for a timer, time jumps straight to that timer instead of sleeping.
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

import pytest

from omniqual.loadgen.records import (
    EffectiveLoad,
    LoadRun,
    RecordStatus,
    RequestedLoad,
    RequestRecord,
)
from omniqual.loadgen.schedule import ArrivalPattern

T = TypeVar("T")


class _Clock:
    now = 1000.0


class _VirtualSelector(selectors.BaseSelector):
    def __init__(self, clock: _Clock) -> None:
        self._inner = selectors.DefaultSelector()
        self._clock = clock

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._inner.register(fileobj, events, data)

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        return self._inner.unregister(fileobj)

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        ready = self._inner.select(0)
        if ready or timeout == 0:
            return ready
        if timeout is None:
            raise RuntimeError("virtual clock: the loop would block forever")
        self._clock.now += timeout
        return []

    def get_map(self) -> Any:
        return self._inner.get_map()

    def close(self) -> None:
        self._inner.close()


class VirtualClockLoop(asyncio.SelectorEventLoop):
    def __init__(self) -> None:
        self._clock = _Clock()
        super().__init__(selector=_VirtualSelector(self._clock))

    def time(self) -> float:
        return self._clock.now


def _run_virtual(coro: Coroutine[Any, Any, T]) -> T:
    loop = VirtualClockLoop()
    try:
        return loop.run_until_complete(coro)
    finally:
        loop.close()


@pytest.fixture
def run_virtual() -> Callable[[Coroutine[Any, Any, T]], T]:
    return _run_virtual


def _make_run(
    latencies_s: Sequence[float],
    *,
    rate: float = 10.0,
    statuses: Sequence[RecordStatus] | None = None,
    lag_s: float = 0.0,
    achieved_issue_rate: float | None = None,
) -> LoadRun:
    """A LoadRun whose requests were scheduled at k/rate and took the given latencies."""
    n = len(latencies_s)
    statuses = statuses or [RecordStatus.OK] * n
    records = []
    for i, (latency, status) in enumerate(zip(latencies_s, statuses, strict=True)):
        scheduled = (i + 1) / rate
        sent = None if status is RecordStatus.NOT_ISSUED else scheduled + lag_s
        ended = None if sent is None else scheduled + latency
        records.append(RequestRecord(i, "e", status, scheduled, sent, sent, ended, False))
    window = n / rate
    issued = sum(1 for r in records if r.sent_s is not None)
    effective = EffectiveLoad(
        issued=issued,
        responded=sum(1 for r in records if r.responded),
        achieved_issue_rate=achieved_issue_rate if achieved_issue_rate is not None else rate,
        achieved_completion_rate=rate,
        actual_duration_s=window + max(latencies_s, default=0.0),
        last_issue_s=window,
        max_issue_lag_s=lag_s,
        p99_issue_lag_s=lag_s,
        waited_for_slot=0,
        total_slot_wait_s=0.0,
        max_slot_wait_s=0.0,
        max_in_flight=1,
    )
    requested = RequestedLoad(
        ArrivalPattern.CONSTANT, rate, 0.0, None, n, None, n, window, None, None
    )
    return LoadRun(requested, effective, tuple(records), 0.0)


@pytest.fixture
def make_run() -> Callable[..., LoadRun]:
    return _make_run
