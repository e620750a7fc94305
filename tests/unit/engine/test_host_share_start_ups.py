"""A measuring gate whose kind shares its start-ups: its own server start-ups run beside the
other groups' work, and it measures only once it holds the host again. Fake activities on the
event loop, ordered by events, never by the clock; a :class:`Tracker` fails the test the moment
a measured part and anything of another group run at once."""

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import partial
from typing import Any

import pytest

from omniqual.engine.run import host_share
from omniqual.engine.run.host_share import HostShare, Slot, placed


class Tracker:
    """What runs now, per group, and the order things happened in."""

    def __init__(self) -> None:
        self.running: list[tuple[str, str, bool]] = []
        self.log: list[str] = []

    @contextmanager
    def doing(self, group: str, what: str, *, measuring: bool = False) -> Iterator[None]:
        for other, name, measured in self.running:
            assert other == group or not (measured or measuring), (group, what, name)
        entry = (group, what, measuring)
        self.running.append(entry)
        self.log.append(f"{group} {what} start")
        try:
            yield
        finally:
            self.running.remove(entry)
            self.log.append(f"{group} {what} end")

    def before(self, first: str, then: str) -> bool:
        return self.log.index(first) < self.log.index(then)


async def _turns(count: int = 5) -> None:
    for _ in range(count):
        await asyncio.sleep(0)


async def _finish(*tasks: "asyncio.Task[Any]") -> None:
    """Let ``tasks`` run to their end within a bounded number of loop turns: one that waits on
    another (a deadlock) fails the test instead of hanging it."""
    for _ in range(1000):
        if all(task.done() for task in tasks):
            break
        await asyncio.sleep(0)
    assert all(task.done() for task in tasks), "deadlocked"
    await asyncio.gather(*tasks)


def _in(slot: Slot, body: Callable[[], Awaitable[Any]]) -> "asyncio.Task[Any]":
    async def run() -> Any:
        with placed(slot):
            return await body()

    return asyncio.create_task(run())


@asynccontextmanager
async def _gate(name: str, *, shares: bool = True) -> AsyncIterator[host_share.Activity]:
    async with host_share.activity(name, recipe=name, exclusive=True,
                                   shares_start_ups=shares) as held:  # fmt: skip
        assert held is not None
        yield held


async def _work(track: Tracker, group: str, what: str, until: asyncio.Event) -> None:
    async with host_share.activity(what, recipe=group):
        with track.doing(group, what):
            await until.wait()


def test_a_measuring_gates_start_up_runs_beside_another_groups_work() -> None:
    track = Tracker()
    found: dict[str, Any] = {}

    async def scenario() -> None:
        share = HostShare()
        ready, b_done, a_away, a_done = (asyncio.Event() for _ in range(4))

        async def a_gate() -> None:
            async with _gate("faults") as held:
                with track.doing("a", "calibrate", measuring=True):
                    await _turns()
                async with host_share.start_up("a-point"):
                    with track.doing("a", "start-up"):
                        a_away.set()
                        await ready.wait()
                with track.doing("a", "measure", measuring=True):
                    await _turns()
                found["a"] = host_share.evidence(held)
            a_done.set()

        async def b_work() -> None:
            await a_away.wait()
            with host_share.server_up("b", ""):  # up, idle once its contract ended
                async with host_share.activity("contract", recipe="b") as held:
                    with track.doing("b", "contract"):
                        await b_done.wait()
                    assert held is not None
                    found["b"] = sorted(held.overlapped)
                await a_done.wait()

        a, b = _in(Slot("a", share), a_gate), _in(Slot("b", share), b_work)
        await _turns(20)
        assert "b contract start" in track.log  # beside a's start-up, not after its gate
        ready.set()
        await _turns(20)
        assert "a measure start" not in track.log  # a waits for b's work to end
        b_done.set()
        await _finish(a, b)

    asyncio.run(scenario())
    assert track.before("a start-up start", "b contract start")
    assert track.before("b contract start", "a start-up end")
    assert track.before("b contract end", "a measure start")
    a = found["a"]
    assert a["concurrent_with"] == ["b: contract"]  # at any moment of the gate
    assert a["concurrent_while_measuring"] == []
    assert a["shared_start_ups"] == ["a-point: start-up for faults"]
    assert a["servers_up_beside"] == ["b (target)"]  # up when it took the host back
    assert isinstance(a["stepped_aside_s"], float) and a["stepped_aside_s"] >= 0
    assert found["b"] == ["a-point: start-up for faults"]  # the start-up, never the gate


def test_a_measurement_waiting_when_the_gate_steps_aside_goes_first() -> None:
    track = Tracker()

    async def scenario() -> None:
        share = HostShare()
        b_queued = asyncio.Event()

        async def a_gate() -> None:
            async with _gate("faults"):
                await b_queued.wait()
                await _turns()
                async with host_share.start_up("a-point"):
                    with track.doing("a", "start-up"):
                        await _turns()
                with track.doing("a", "measure", measuring=True):
                    await _turns()

        async def b_soak() -> None:
            await _turns()
            b_queued.set()
            async with _gate("soak", shares=False):
                with track.doing("b", "soak", measuring=True):
                    await _turns()

        await _finish(_in(Slot("a", share), a_gate), _in(Slot("b", share), b_soak))

    asyncio.run(scenario())
    assert track.log == ["b soak start", "b soak end", "a start-up start", "a start-up end",
                         "a measure start", "a measure end"]  # fmt: skip


def test_a_measurement_queued_during_the_start_up_goes_before_the_gate_takes_the_host_back(
) -> None:  # fmt: skip
    track = Tracker()

    async def scenario() -> None:
        share = HostShare()
        a_away, b_queued = asyncio.Event(), asyncio.Event()

        async def a_gate() -> None:
            async with _gate("faults"):
                async with host_share.start_up("a-point"):
                    with track.doing("a", "start-up"):
                        a_away.set()
                        await b_queued.wait()
                        await _turns()
                with track.doing("a", "measure", measuring=True):
                    await _turns()

        async def b_soak() -> None:
            await a_away.wait()
            b_queued.set()
            async with _gate("soak", shares=False):
                with track.doing("b", "soak", measuring=True):
                    await _turns()

        await _finish(_in(Slot("a", share), a_gate), _in(Slot("b", share), b_soak))

    asyncio.run(scenario())
    assert track.log == ["a start-up start", "a start-up end", "b soak start", "b soak end",
                         "a measure start", "a measure end"]  # fmt: skip


def test_two_groups_whose_measuring_gates_both_start_servers_do_not_deadlock() -> None:
    """Each gate measures, starts a server, measures again, twice. Both start-ups of a round
    must be under way at once to finish (a barrier): the share lets them overlap, and the
    measured parts still never do."""
    track = Tracker()
    found: dict[str, Any] = {}

    async def scenario() -> None:
        share = HostShare()
        both = asyncio.Barrier(2)

        async def gate(group: str) -> None:
            async with _gate(f"{group}-faults") as held:
                for launch in range(2):
                    with track.doing(group, f"measure {launch}", measuring=True):
                        await _turns()
                    async with host_share.start_up(f"{group}-point{launch}"):
                        with track.doing(group, f"start-up {launch}"):
                            await both.wait()
                with track.doing(group, "measure last", measuring=True):
                    await _turns()
                found[group] = host_share.evidence(held)

        await _finish(*(_in(Slot(group, share), partial(gate, group)) for group in "ab"))

    asyncio.run(scenario())
    for group, other in (("a", "b"), ("b", "a")):
        assert found[group]["concurrent_while_measuring"] == []
        assert len(found[group]["shared_start_ups"]) == 2
        assert f"{other}-point0: start-up for {other}-faults" in found[group]["concurrent_with"]


def test_a_gate_whose_kind_does_not_share_start_ups_keeps_the_host_through_them() -> None:
    track = Tracker()
    found: dict[str, Any] = {}

    async def scenario() -> None:
        share = HostShare()
        a_away, b_asked = asyncio.Event(), asyncio.Event()
        done = asyncio.Event()
        done.set()

        async def a_gate() -> None:
            async with _gate("sweep", shares=False) as held:
                async with host_share.start_up("a-point"):
                    with track.doing("a", "start-up", measuring=True):  # part of the gate
                        a_away.set()
                        await b_asked.wait()
                        await _turns(20)
                with track.doing("a", "measure", measuring=True):
                    await _turns()
                found["a"] = host_share.evidence(held)

        async def b_work() -> None:
            await a_away.wait()
            b_asked.set()
            await _work(track, "b", "contract", done)

        await _finish(_in(Slot("a", share), a_gate), _in(Slot("b", share), b_work))

    asyncio.run(scenario())
    assert track.log == ["a start-up start", "a start-up end", "a measure start",
                         "a measure end", "b contract start", "b contract end"]  # fmt: skip
    assert found["a"] == {"concurrent_with": [], "concurrent_while_measuring": [],
                          "servers_up_beside": [],
                          "servers_paused_while_measuring": []}  # fmt: skip


def test_a_failed_start_up_takes_the_host_back_before_its_gate_goes_on() -> None:
    track = Tracker()

    async def scenario() -> None:
        share = HostShare()
        a_away, b_done = asyncio.Event(), asyncio.Event()

        async def a_gate() -> None:
            async with _gate("faults"):
                with pytest.raises(RuntimeError, match="refused"):
                    async with host_share.start_up("a-point"):
                        a_away.set()
                        await _turns(20)
                        raise RuntimeError("refused")
                with track.doing("a", "judge", measuring=True):
                    await _turns()

        async def b_work() -> None:
            await a_away.wait()
            await _work(track, "b", "contract", b_done)

        a, b = _in(Slot("a", share), a_gate), _in(Slot("b", share), b_work)
        await _turns(40)
        assert track.log == ["b contract start"]  # a's gate waits for the host
        b_done.set()
        await _finish(a, b)

    asyncio.run(scenario())
    assert track.log == ["b contract start", "b contract end", "a judge start", "a judge end"]


def test_a_gate_cancelled_during_its_start_up_lets_the_others_go_on() -> None:
    track = Tracker()

    async def scenario() -> None:
        share = HostShare()
        a_away = asyncio.Event()

        async def a_gate() -> None:
            async with _gate("faults"), host_share.start_up("a-point"):
                a_away.set()
                await asyncio.Event().wait()  # never ready

        async def b_soak() -> None:
            async with _gate("soak", shares=False):
                with track.doing("b", "soak", measuring=True):
                    await _turns()

        a = _in(Slot("a", share), a_gate)
        await a_away.wait()
        a.cancel()
        await asyncio.gather(a, return_exceptions=True)
        await _finish(_in(Slot("b", share), b_soak))
        assert not share._running and not share._waiting

    asyncio.run(scenario())
    assert track.log == ["b soak start", "b soak end"]
