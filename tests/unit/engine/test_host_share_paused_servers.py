"""While a measuring gate holds the shared host, the idle servers beside it are paused: never its
own target nor a server it launched, resumed whenever it gives the host up, and resumed before
one of them is stopped. Ordered by events, never by the clock; the signals are recorded."""

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from typing import Any

from omniqual.engine.run import host_share
from omniqual.engine.run.host_share import HostShare, Slot, placed
from omniqual.engine.run.idle_servers import IdleServers


class Signals:
    def __init__(self) -> None:
        self.log: list[str] = []
        self.stopped: set[int] = set()

    def pause(self, pid: int) -> None:
        self.log.append(f"pause {pid}")
        self.stopped.add(pid)

    def resume(self, pid: int) -> None:
        self.log.append(f"resume {pid}")
        self.stopped.discard(pid)

    def share(self) -> HostShare:
        return HostShare(IdleServers(self.pause, self.resume))


async def _in(slot: Slot, body: Callable[[], Awaitable[None]]) -> None:
    with placed(slot):
        await body()


async def _wan_serves(pids: dict[str, int], up: asyncio.Event, done: asyncio.Event) -> None:
    """The other group: its servers (role: pid) up and idle until ``done``."""
    with ExitStack() as stack:
        for role, pid in pids.items():
            stack.enter_context(host_share.server_up("wan", role, pid=pid))
        up.set()
        await done.wait()


def test_a_measuring_gate_pauses_other_groups_idle_servers_and_resumes_them() -> None:
    signals = Signals()
    seen: dict[str, Any] = {}

    async def scenario() -> None:
        share = signals.share()
        b_up, a_done = asyncio.Event(), asyncio.Event()

        async def b_serves() -> None:
            await _wan_serves({"": 200, "reference": 201}, b_up, a_done)

        async def a_measures() -> None:
            await b_up.wait()
            with host_share.server_up("sd3", "", pid=100):
                async with host_share.activity("soak on sd3", recipe="sd3", exclusive=True,
                                               spare=frozenset({100})) as held:  # fmt: skip
                    seen["during"] = set(signals.stopped)
                    seen["evidence"] = host_share.evidence(held)
                seen["after"] = set(signals.stopped)
                async with host_share.activity("parity on sd3", recipe="sd3"):
                    seen["comparing"] = set(signals.stopped)
            a_done.set()

        await asyncio.gather(_in(Slot("wan", share), b_serves), _in(Slot("sd3", share), a_measures))

    asyncio.run(scenario())
    assert seen["during"] == {200, 201}  # its own target (100) is what it measures
    assert seen["after"] == set() and seen["comparing"] == set()
    assert seen["evidence"]["servers_paused_while_measuring"] == ["wan (reference)",
                                                                 "wan (target)"]  # fmt: skip
    assert seen["evidence"]["servers_up_beside"] == ["wan (reference)", "wan (target)"]
    assert "pause 100" not in signals.log


def test_a_gate_that_only_compares_pauses_nothing() -> None:
    signals = Signals()

    async def scenario() -> None:
        share = signals.share()
        up = asyncio.Event()

        async def b_serves() -> None:
            with host_share.server_up("wan", "", pid=200):
                up.set()
                await asyncio.sleep(0)
                for _ in range(5):
                    await asyncio.sleep(0)

        async def a_compares() -> None:
            await up.wait()
            async with host_share.activity("parity", recipe="sd3"):
                assert not signals.stopped

        await asyncio.gather(_in(Slot("wan", share), b_serves), _in(Slot("sd3", share), a_compares))

    asyncio.run(scenario())
    assert signals.log == []


def test_servers_resume_while_the_gate_is_away_for_its_own_start_up_and_its_own_stay_up() -> None:
    """A gate sharing its start-ups gives the host up for each: the others may work then, on
    their servers, which must run; the server it launched there is its own, never paused."""
    signals = Signals()
    seen: dict[str, Any] = {}

    async def scenario() -> None:
        share = signals.share()
        b_up, a_done = asyncio.Event(), asyncio.Event()

        async def b_serves() -> None:
            await _wan_serves({"": 200}, b_up, a_done)

        async def a_perf() -> None:
            await b_up.wait()
            async with host_share.activity("perf on sd3", recipe="sd3", exclusive=True,
                                           shares_start_ups=True) as held:  # fmt: skip
                seen["first"] = set(signals.stopped)
                async with host_share.start_up("sd3"):
                    seen["away"] = set(signals.stopped)
                with host_share.server_up("sd3", "perf launch 1", pid=300):
                    seen["measuring"] = set(signals.stopped)
                seen["evidence"] = host_share.evidence(held)
            a_done.set()

        await asyncio.gather(_in(Slot("wan", share), b_serves), _in(Slot("sd3", share), a_perf))

    asyncio.run(scenario())
    assert seen["first"] == {200}
    assert seen["away"] == set()  # resumed for the start-up
    assert seen["measuring"] == {200}  # paused again; its own launch (300) never
    assert "pause 300" not in signals.log
    assert seen["evidence"]["servers_paused_while_measuring"] == ["wan (target)"]


def test_a_server_stopped_while_paused_is_resumed_first() -> None:
    """Its group may end and stop it while another group's gate measures: a paused process
    would not handle the SIGTERM that stops it."""
    signals = Signals()
    order: list[str] = []

    async def scenario() -> None:
        share = signals.share()
        paused, measured = asyncio.Event(), asyncio.Event()

        async def b_ends() -> None:
            with host_share.server_up("wan", "", pid=200):
                await paused.wait()
            order.append(f"stopping, paused: {200 in signals.stopped}")

        async def a_measures() -> None:
            for _ in range(3):
                await asyncio.sleep(0)
            async with host_share.activity("soak", recipe="sd3", exclusive=True):
                order.append(f"measuring, paused: {200 in signals.stopped}")
                paused.set()
                for _ in range(5):
                    await asyncio.sleep(0)
            measured.set()

        await asyncio.gather(_in(Slot("wan", share), b_ends), _in(Slot("sd3", share), a_measures))
        assert share.servers == []

    asyncio.run(scenario())
    assert order == ["measuring, paused: True", "stopping, paused: False"]
    assert signals.log == ["pause 200", "resume 200"]  # once, not again at the gate's end
