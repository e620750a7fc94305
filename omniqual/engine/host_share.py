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
server that is up and idle is not an activity. Each activity notes the other groups' activities
it overlapped; a gate's result records them, and a measuring gate also the servers that were up
(idle) beside its own."""

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TypeVar

from pydantic import JsonValue

T = TypeVar("T")


@dataclass(eq=False, slots=True)
class Activity:
    group: str
    """The launch group (its lead recipe's id): exclusivity is between groups."""
    recipe: str
    label: str
    exclusive: bool
    overlapped: set[str] = field(default_factory=set)
    """The other groups' activities that ran at any moment of this one."""
    servers_beside: tuple[str, ...] = ()
    """Servers up (idle: nothing else runs) when a measuring activity began, its own aside."""

    def describe(self) -> str:
        return f"{self.recipe}: {self.label}"


class HostShare:
    """The readers-writer gate of one run; single-threaded (the event loop's)."""

    def __init__(self) -> None:
        self._running: list[Activity] = []
        self._waiting: list[Activity] = []
        """Exclusive activities waiting, first come first."""
        self._changed = asyncio.Event()
        self.servers: list[tuple[str, str]] = []
        """(group, label) of every server up now, whichever group launched it."""
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

    @asynccontextmanager
    async def hold(self, activity: Activity) -> AsyncIterator[Activity]:
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
            own = (activity.group, server_label(activity.recipe, ""))
            beside = (label for group, label in self.servers if (group, label) != own)
            activity.servers_beside = tuple(sorted(beside))
        for other in self._running:
            if other.group != activity.group:
                other.overlapped.add(activity.describe())
                activity.overlapped.add(other.describe())
        self._running.append(activity)
        try:
            yield activity
        finally:
            self._running.remove(activity)
            self._notify()


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
def server_up(recipe: str, role: str) -> Iterator[None]:
    """A server of this group is up for the block, busy or idle: a gate of any group that
    measures meanwhile records it beside itself."""
    slot = _slot.get()
    if slot is None:
        yield
        return
    entry = (slot.group, server_label(recipe, role))
    slot.share.servers.append(entry)
    try:
        yield
    finally:
        slot.share.servers.remove(entry)


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
    label: str, *, recipe: str | None = None, exclusive: bool = False
) -> AsyncIterator[Activity | None]:
    """Hold the host for the block as an activity of this group (None outside a group, or
    inside another activity, which the block is part of)."""
    slot = _slot.get()
    if slot is None or _held.get() is not None:
        yield None
        return
    held = Activity(slot.group, recipe or slot.group, label, exclusive)
    async with slot.share.hold(held):
        token = _held.set(held)
        try:
            yield held
        finally:
            _held.reset(token)


def evidence(held: Activity | None) -> dict[str, JsonValue]:
    """What a gate's result records of its place on a shared host: the other groups'
    activities it ran beside (empty: it ran alone) and the devices its group was given."""
    slot = _slot.get()
    if held is None or slot is None:
        return {}
    beside: list[JsonValue] = [*sorted(held.overlapped)]
    found: dict[str, JsonValue] = {"concurrent_with": beside}
    if held.exclusive:
        found["servers_up_beside"] = [*held.servers_beside]
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
