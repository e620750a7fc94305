"""The shared host: activities of launch groups overlap, a measuring one has the host to itself,
and what overlapped is noted. Ordered by events, never by the clock."""

import asyncio
import threading
from collections.abc import Awaitable, Callable

from omniqual.engine.run import host_share
from omniqual.engine.run.host_share import HostShare, Slot, placed


async def _in(slot: Slot, body: Callable[[], Awaitable[None]]) -> None:
    with placed(slot):
        await body()


async def _turns(count: int = 5) -> None:
    for _ in range(count):
        await asyncio.sleep(0)


def test_outside_a_group_nothing_is_held_or_added() -> None:
    async def scenario() -> None:
        async with host_share.activity("g on r", exclusive=True) as held:
            assert held is None
        assert host_share.launch_env() == {} and host_share.evidence(None) == {}
        assert not host_share.sharing_host()

    asyncio.run(scenario())


def test_a_measuring_activity_waits_for_the_others_and_holds_them_back() -> None:
    log: list[str] = []

    async def scenario() -> None:
        share = HostShare()
        x, y = Slot("x", share), Slot("y", share)
        release_x1 = asyncio.Event()

        async def x_first() -> None:
            async with host_share.activity("x1"):
                log.append("x1 start")
                await release_x1.wait()
                log.append("x1 end")

        async def y_measures() -> None:
            async with host_share.activity("y-timed", exclusive=True) as held:
                log.append("y start")
                await _turns()
                assert held is not None
                log.append(f"y end, beside {sorted(held.overlapped)}")

        async def x_second() -> None:
            async with host_share.activity("x2"):
                log.append("x2 start")

        first = asyncio.create_task(_in(x, x_first))
        await _turns()
        measuring = asyncio.create_task(_in(y, y_measures))
        await _turns()
        # y waits for x1; x2, asked for after y, waits for y (it goes first).
        second = asyncio.create_task(_in(x, x_second))
        await _turns()
        assert log == ["x1 start"]
        release_x1.set()
        await asyncio.gather(first, measuring, second)

    asyncio.run(scenario())
    assert log == ["x1 start", "x1 end", "y start", "y end, beside []", "x2 start"]


def test_activities_of_two_groups_note_each_other_and_not_their_own() -> None:
    async def scenario() -> tuple[set[str], set[str], set[str]]:
        share = HostShare()
        both = asyncio.Event()
        seen: dict[str, set[str]] = {}

        async def hold(name: str, recipe: str) -> None:
            async with host_share.activity(name, recipe=recipe) as held:
                assert held is not None
                await both.wait()
                seen[name] = held.overlapped

        tasks = [
            asyncio.create_task(_in(Slot("a", share), lambda: hold("good on r1", "a"))),
            asyncio.create_task(_in(Slot("a", share), lambda: hold("start-up", "a"))),
            asyncio.create_task(_in(Slot("b", share), lambda: hold("good on r2", "twin"))),
        ]
        await _turns()
        both.set()
        await asyncio.gather(*tasks)
        return seen["good on r1"], seen["start-up"], seen["good on r2"]

    gate_a, startup_a, gate_b = asyncio.run(scenario())
    assert gate_a == startup_a == {"twin: good on r2"}
    assert gate_b == {"a: good on r1", "a: start-up"}


def test_a_launch_inside_a_gate_is_part_of_the_gate() -> None:
    async def scenario() -> None:
        async with host_share.activity("reference-parity on r") as gate:
            assert gate is not None
            async with host_share.activity("start-up") as nested:
                assert nested is None

    asyncio.run(_in(Slot("a", HostShare()), scenario))


def test_a_cancelled_measuring_wait_lets_the_others_go_on() -> None:
    log: list[str] = []

    async def scenario() -> None:
        share = HostShare()
        release = asyncio.Event()

        async def first() -> None:
            async with host_share.activity("x1"):
                await release.wait()

        async def measuring() -> None:
            async with host_share.activity("timed", exclusive=True):
                log.append("measured")

        async def second() -> None:
            async with host_share.activity("x2"):
                log.append("x2")

        holder = asyncio.create_task(_in(Slot("x", share), first))
        await _turns()
        waiting = asyncio.create_task(_in(Slot("y", share), measuring))
        await _turns()
        later = asyncio.create_task(_in(Slot("x", share), second))
        await _turns()
        assert log == []
        waiting.cancel()
        await later
        release.set()
        await holder

    asyncio.run(scenario())
    assert log == ["x2"]


def test_a_group_launches_on_its_own_devices_and_its_gates_say_so() -> None:
    async def scenario() -> tuple[dict[str, str], dict[str, object]]:
        async with host_share.activity("good on r") as held:
            return host_share.launch_env(), dict(host_share.evidence(held))

    slot = Slot("a", HostShare(), devices=("2", "3"), pci_order=True)
    env, evidence = asyncio.run(_in_returning(slot, scenario))
    assert env == {"CUDA_VISIBLE_DEVICES": "2,3", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
    assert evidence == {"concurrent_with": [], "cuda_visible_devices": "2,3"}


async def _in_returning(
    slot: Slot, body: Callable[[], Awaitable[tuple[dict[str, str], dict[str, object]]]]
) -> tuple[dict[str, str], dict[str, object]]:
    with placed(slot):
        return await body()


def test_blocking_work_runs_in_a_thread_only_when_groups_share_the_host() -> None:
    here = threading.get_ident()

    async def where() -> int:
        return await host_share.off_loop(threading.get_ident, "preparation")

    assert asyncio.run(where()) == here

    async def placed_where() -> int:
        with placed(Slot("a", HostShare())):
            return await where()

    assert asyncio.run(placed_where()) != here


def test_a_measuring_activity_records_the_servers_up_beside_its_own() -> None:
    """Idle servers are not activities (they do not hold a measurement back), but they hold
    memory: a measuring gate records every server up when it began, its own target aside."""
    seen: dict[str, list[object]] = {}

    async def scenario() -> None:
        share = HostShare()
        x, y = Slot("x", share), Slot("y", share)
        x_up, y_done = asyncio.Event(), asyncio.Event()

        async def x_serves() -> None:
            with host_share.server_up("sd3", ""), host_share.server_up("sd3", "reference"):
                x_up.set()
                await y_done.wait()

        async def y_measures() -> None:
            await x_up.wait()
            with host_share.server_up("wan", ""):
                async with host_share.activity("soak", recipe="wan", exclusive=True) as held:
                    seen["measuring"] = host_share.evidence(held)["servers_up_beside"]  # type: ignore[assignment]
                async with host_share.activity("parity", recipe="wan") as held:
                    seen["comparing"] = [k for k in host_share.evidence(held)]
            y_done.set()

        await asyncio.gather(_in(x, x_serves), _in(y, y_measures))
        assert share.servers == []

    asyncio.run(scenario())
    assert seen["measuring"] == ["sd3 (reference)", "sd3 (target)"]
    assert seen["comparing"] == ["concurrent_with"]  # only a measuring gate lists idle servers
