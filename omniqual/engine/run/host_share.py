"""One host shared by launch groups that run at once (``--jobs``): who runs what, on which
devices, and which gates have the host to themselves.

Each scheduled group's task carries its :class:`Slot` (the group, the devices it was given, the
run's :class:`HostShare`) in a context variable, so launches and gates anywhere below it find it
as they find the timing recorder. Outside a scheduled group (``--jobs 1``, ``gate run``) every
function here does nothing: launches get no extra environment and results no extra fields.

The share is a readers-writer gate over *activities*: a model's preparation, a server's
start-up, a gate. Most activities share the host. A gate whose kind measures time or memory
takes it whole: it waits until no other group's activity runs, no other group starts one while
it waits (a waiting measurement goes first), and it keeps the host until it ends. A group's
server that is up and idle is not an activity, but it is not free either: while a measuring
gate holds the host, the servers up beside it are paused (:mod:`omniqual.engine.run.idle_servers`).

A launch made inside a gate is part of that gate, with one exception: a measuring gate whose
kind shares its start-ups (``shares_start_ups``) gives the host up for each of its own server
start-ups (:func:`start_up`), starts that server as a shared activity of its group, and then
waits for the host to itself again, behind any measurement that queued meanwhile, before its
caller goes on to measure anything. It never upgrades a hold: it holds nothing while it waits,
so two measuring gates that both start servers cannot wait on each other.

Each activity notes the other groups' activities it overlapped; a gate's result records them
(``concurrent_with``, its shared start-ups' included), and a measuring gate also what overlapped
while it held the host (``concurrent_while_measuring``: empty by construction, recorded so a
reader can check it), the servers that were up (idle) beside its own and the ones it paused."""

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TypeVar

from pydantic import JsonValue

from omniqual.engine.run.idle_servers import IdleServers, UpServer

T = TypeVar("T")


@dataclass(eq=False, slots=True)
class Activity:
    group: str
    """The launch group (its lead recipe's id): exclusivity is between groups."""
    recipe: str
    label: str
    exclusive: bool
    shares_start_ups: bool = False
    """A measuring gate that gives the host up for its own server start-ups (see
    :func:`start_up`); meaningless for a shared activity."""
    spare: frozenset[int] = frozenset()
    """Servers (pids) a measuring activity uses and never pauses: its gate's target."""
    overlapped: set[str] = field(default_factory=set)
    """The other groups' activities that ran at any moment of this one (of its shared
    start-ups too)."""
    held_beside: set[str] = field(default_factory=set)
    """The other groups' activities that ran while this one held the host, its shared start-ups
    aside: for a measuring gate, while it measured (never any, by the share's rule)."""
    servers_beside: tuple[str, ...] = ()
    """Servers up (idle: nothing else runs) whenever a measuring activity took the host, its own
    aside."""
    start_ups: list[str] = field(default_factory=list)
    """The start-ups it ran as shared activities (a measuring gate that shares them)."""
    paused: set[str] = field(default_factory=set)
    """The servers up beside it that it paused while it held the host (a measuring one)."""
    aside_s: float = 0.0
    """Seconds it did not hold the host: its shared start-ups and the waits around them."""
    # The share's bookkeeping while a gate is away for its start-ups: how many are under way,
    # since when it is away, and whether one of its start-ups is taking the host back.
    away: int = field(default=0, init=False, repr=False)
    left_at: float = field(default=0.0, init=False, repr=False)
    rejoining: bool = field(default=False, init=False, repr=False)

    def describe(self) -> str:
        return f"{self.recipe}: {self.label}"


class HostShare:
    """The readers-writer gate of one run; single-threaded (the event loop's)."""

    def __init__(self, idle: IdleServers | None = None) -> None:
        self.idle = idle or IdleServers()
        self._running: list[Activity] = []
        self._waiting: list[Activity] = []
        """Exclusive activities waiting, first come first."""
        self._changed = asyncio.Event()
        self.preparing = asyncio.Lock()
        """One model preparation at a time: two groups may build the same cached checkpoint."""

    def _may_start(self, activity: Activity) -> bool:
        others = [a for a in self._running if a.group != activity.group]
        if activity.exclusive:
            return self._waiting[0] is activity and not others
        waiting = any(a.group != activity.group for a in self._waiting)
        return not waiting and not any(a.exclusive for a in others)

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def _acquire(self, activity: Activity) -> None:
        """Wait until ``activity`` may run, then run it. The caller holds nothing meanwhile."""
        if activity.exclusive:
            self._waiting.append(activity)
        try:
            while not self._may_start(activity):
                await self._changed.wait()
        finally:
            if activity.exclusive:
                self._waiting.remove(activity)
                self._notify()  # activities held back by this one's wait may start
        if activity.exclusive:
            # Taken again after a shared start-up, the host may hold servers started meanwhile.
            own = (activity.group, server_label(activity.recipe, ""))
            beside = {label for group, label in self.servers if (group, label) != own}
            activity.servers_beside = tuple(sorted(beside | set(activity.servers_beside)))
            activity.paused.update(self.idle.pause_beside(activity, activity.spare))
        for other in self._running:
            if other.group != activity.group:
                for one, two in ((other, activity), (activity, other)):
                    one.overlapped.add(two.describe())
                    one.held_beside.add(two.describe())
        self._running.append(activity)

    @property
    def servers(self) -> list[tuple[str, str]]:
        """(group, label) of every server up now, whichever group launched it."""
        return self.idle.labels()

    def _release(self, activity: Activity) -> None:
        # Not running: a gate whose shared start-up was cancelled never took the host again.
        if activity in self._running:
            self._running.remove(activity)
            if activity.exclusive:  # the others may run again: their servers too
                self.idle.resume_for(activity)
            self._notify()

    @asynccontextmanager
    async def hold(self, activity: Activity) -> AsyncIterator[Activity]:
        await self._acquire(activity)
        try:
            yield activity
        finally:
            self._release(activity)

    @asynccontextmanager
    async def aside(self, gate: Activity, side: Activity) -> AsyncIterator[None]:
        """Run the block as ``side`` (a start-up of ``gate``'s own, shared) with ``gate``'s
        hold given up, then wait for ``gate`` to hold the host again. Given up before ``side``
        waits and taken again after ``side`` ended, never upgraded: nothing is held while
        waiting. A failed start-up takes the host again too (its gate goes on); a cancelled
        one does not (its gate is being stopped)."""
        if gate in self._running:
            self._release(gate)
            gate.left_at = asyncio.get_running_loop().time()
        gate.away += 1
        try:
            async with self.hold(side):
                yield
        except Exception:
            self._back(gate, side)
            await self._until_held(gate)
            raise
        except BaseException:
            self._back(gate, side)
            raise
        self._back(gate, side)
        await self._until_held(gate)

    def _back(self, gate: Activity, side: Activity) -> None:
        gate.away -= 1
        gate.overlapped |= side.overlapped
        gate.start_ups.append(side.describe())
        self._notify()

    async def _until_held(self, gate: Activity) -> None:
        """Return once ``gate`` holds the host again with none of its start-ups under way:
        start-ups of one gate made at once (no built-in check makes any) share one absence; the
        last one back takes the host (another one, if that one was cancelled)."""
        while gate not in self._running:
            if gate.away or gate.rejoining:
                await self._changed.wait()
                continue
            gate.rejoining = True
            try:
                await self._acquire(gate)
            finally:
                gate.rejoining = False
                self._notify()
            if gate.away:  # another start-up of it began meanwhile: away until that one is back
                self._release(gate)
                continue
            gate.aside_s += asyncio.get_running_loop().time() - gate.left_at


@dataclass(frozen=True, slots=True)
class Slot:
    group: str
    share: HostShare
    devices: tuple[str, ...] = ()
    pci_order: bool = False


_slot: ContextVar[Slot | None] = ContextVar("omniqual_slot", default=None)
_held: ContextVar[Activity | None] = ContextVar("omniqual_activity", default=None)
"""The activity this code runs inside: a launch within a gate (a parity reference, a sweep
point) is part of that gate, never an activity of its own."""


@contextmanager
def placed(slot: Slot) -> Iterator[Slot]:
    """Run the block (a group's task) as ``slot``."""
    token = _slot.set(slot)
    try:
        yield slot
    finally:
        _slot.reset(token)


def sharing_host() -> bool:
    """Whether this code runs in a launch group scheduled beside others."""
    return _slot.get() is not None


def given_devices() -> bool:
    """Whether this code runs in a launch group that was given devices of its own (GPUs)."""
    slot = _slot.get()
    return slot is not None and bool(slot.devices)


def server_label(recipe: str, role: str) -> str:
    return f"{recipe} ({role or 'target'})"


@contextmanager
def server_up(recipe: str, role: str, pid: int | None = None) -> Iterator[None]:
    """A server of this group (process ``pid`` of this host, if it is one) is up for the block,
    busy or idle: a gate of any group that measures meanwhile records it beside itself and
    pauses it, unless it is that gate's own."""
    slot = _slot.get()
    if slot is None:
        yield
        return
    entry = UpServer(slot.group, server_label(recipe, role), pid, _held.get())
    slot.share.idle.add(entry)
    try:
        yield
    finally:
        slot.share.idle.remove(entry)


def launch_env() -> dict[str, str]:
    """The environment a launch of this group adds: its devices, when it was given some."""
    slot = _slot.get()
    if slot is None or not slot.devices:
        return {}
    env = {"CUDA_VISIBLE_DEVICES": ",".join(slot.devices)}
    if slot.pci_order:
        env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
    return env


@asynccontextmanager
async def activity(
    label: str, *, recipe: str | None = None, exclusive: bool = False,
    shares_start_ups: bool = False, spare: frozenset[int] = frozenset(),
) -> AsyncIterator[Activity | None]:  # fmt: skip
    """Hold the host for the block as an activity of this group (None outside a group, or
    inside another activity, which the block is part of). ``shares_start_ups``: an exclusive
    gate whose own server start-ups run shared (see :func:`start_up`); ``spare``: the servers
    (pids) an exclusive one uses, never paused while it holds the host."""
    slot = _slot.get()
    if slot is None or _held.get() is not None:
        yield None
        return
    held = Activity(slot.group, recipe or slot.group, label, exclusive, shares_start_ups, spare)
    async with slot.share.hold(held):
        token = _held.set(held)
        try:
            yield held
        finally:
            _held.reset(token)


@asynccontextmanager
async def start_up(recipe: str) -> AsyncIterator[None]:
    """A server of this group starting for the block (until it is ready or refused).

    Outside any activity it is an activity of its own, shared. Inside a gate it is part of that
    gate, unless the gate holds the host to measure and its kind shares its start-ups: the gate
    then gives the host up for the block, the start-up runs shared beside the other groups'
    work, and the block's caller goes on only once the gate holds the host again, before it
    measures anything on the new server."""
    slot, gate = _slot.get(), _held.get()
    if slot is None or gate is None:
        async with activity("start-up", recipe=recipe):
            yield
        return
    if not (gate.exclusive and gate.shares_start_ups):
        yield
        return
    side = Activity(slot.group, recipe, f"start-up for {gate.label}", exclusive=False)
    async with slot.share.aside(gate, side):
        yield


def evidence(held: Activity | None) -> dict[str, JsonValue]:
    """What a gate's result records of its place on a shared host: the other groups'
    activities it ran beside at any moment (empty: it ran alone) and the devices its group was
    given; a measuring gate also what ran beside it while it measured (always empty), the idle
    servers up beside it and, when its kind shares start-ups, the ones it ran shared and how
    long it was away from the host for them."""
    slot = _slot.get()
    if held is None or slot is None:
        return {}
    beside: list[JsonValue] = [*sorted(held.overlapped)]
    found: dict[str, JsonValue] = {"concurrent_with": beside}
    if held.exclusive:
        found["concurrent_while_measuring"] = [*sorted(held.held_beside)]
        found["servers_up_beside"] = [*held.servers_beside]
        found["servers_paused_while_measuring"] = [*sorted(held.paused)]
        if held.shares_start_ups:
            found["shared_start_ups"] = [*held.start_ups]
            found["stepped_aside_s"] = round(held.aside_s, 3)
    if slot.devices:
        found["cuda_visible_devices"] = ",".join(slot.devices)
    return found


async def off_loop(work: Callable[[], T], label: str) -> T:
    """``work()`` (blocking: a checkpoint build, a software probe), in a thread as an activity
    when groups share the host, so it neither stalls another group's gate nor runs beside a
    measuring one; called in place otherwise."""
    slot = _slot.get()
    if slot is None:
        return work()
    async with activity(label), slot.share.preparing:
        return await asyncio.to_thread(work)
