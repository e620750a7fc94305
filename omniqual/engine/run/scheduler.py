"""Run a plan's launch groups: one after another (``--jobs 1``), or as many at once as the job
count and the host's devices or cores allow.

A launch group is the recipes one launch serves (:func:`omniqual.engine.run.plan.launch_groups`)
with the gates still to run on them. Groups running at once never share a GPU: each is given
its own devices (``CUDA_VISIBLE_DEVICES`` on its launches, recorded with its results), and gates
that measure time or memory have the host to themselves (:mod:`omniqual.engine.run.host_share`).
A group that fails (its launch, a fault outside its gates) stops itself only: the others run to
their end, then the first failure is raised as it would have been alone, naming the others."""

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

from omniqual.checks.registry import measures, resolve
from omniqual.engine.run.events import GateSkippedAsDone, Observer
from omniqual.engine.run.host_share import HostShare, Slot, placed
from omniqual.engine.run.plan import DoneKey, PlannedGate, is_done, launch_groups
from omniqual.engine.run.resources import (
    Host,
    Jobs,
    Ledger,
    Need,
    auto_jobs,
    group_need,
    host_resources,
)
from omniqual.specs.recipes import LoadedRecipe

logger = logging.getLogger(__name__)

Members = list[tuple[LoadedRecipe, list[PlannedGate]]]


@dataclass(frozen=True, slots=True)
class LaunchGroup:
    members: Members
    """Each recipe one launch serves, with its gates not yet recorded; the first one leads."""
    url: str | None
    """The campaign's URL for the lead recipe, if it names one (nothing is launched then)."""

    @property
    def lead(self) -> LoadedRecipe:
        return self.members[0][0]

    @property
    def recipes(self) -> list[str]:
        return [recipe.recipe.id for recipe, _ in self.members]


def pending_groups(
    work: Sequence[tuple[LoadedRecipe, list[PlannedGate]]],
    urls: Mapping[str, str] | None,
    done: set[DoneKey],
    observe: Observer,
) -> tuple[list[LaunchGroup], int]:
    """The launch groups with gates left to run, and how many gates were recorded already."""
    groups: list[LaunchGroup] = []
    skipped = 0
    for group in launch_groups([recipe for recipe, _ in work], urls):
        members: Members = []
        for position in group:
            recipe, items = work[position]
            for item in items:
                if is_done(item, done):
                    skipped += 1
                    observe(GateSkippedAsDone(item.gate.spec.id, str(item.row)))
            todo = [item for item in items if not is_done(item, done)]
            if todo:
                members.append((recipe, todo))
        if members:
            groups.append(LaunchGroup(members, (urls or {}).get(members[0][0].recipe.id)))
    return groups, skipped


def measuring(group: LaunchGroup) -> bool:
    """Whether any of the group's gates measures time or memory (has the host to itself)."""
    return any(
        measures(resolve(item.gate.spec.kind)) for _, items in group.members for item in items
    )


def interleaved(groups: Sequence[LaunchGroup]) -> list[LaunchGroup]:
    """``groups`` in an order for running several at once: the groups that measure spread
    evenly among those that do not, each kind in plan order. A measuring gate holds the host
    alone, so two measuring groups side by side mostly wait on each other; beside one that only
    starts a server and compares outputs, the waiting is what the measurement itself takes."""
    heavy = [g for g in groups if measuring(g)]
    light = [g for g in groups if not measuring(g)]
    if not heavy or not light:
        return list(groups)
    ordered: list[LaunchGroup] = []
    share = len(light) / len(heavy)
    for index, group in enumerate(heavy):
        ordered.append(group)
        ordered.extend(light[round(index * share) : round((index + 1) * share)])
    return ordered


def need_of(group: LaunchGroup, host: Host) -> Need:
    """What the group occupies: its recipes' declarations. A recipe the campaign points at a
    URL still counts (its refusal or sweep gates launch it here); a ``url`` recipe does not."""
    return group_need([recipe.recipe for recipe, _ in group.members], host)


def lanes(groups: Sequence[LaunchGroup], jobs: Jobs, host: Host | None = None) -> int:
    """How many groups run at once under ``jobs`` on ``host`` (default: this one); more than 1
    runs even one group as a scheduled one (its results say what ran beside them: nothing)."""
    if jobs != "auto" and jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    if jobs != "auto":
        return jobs
    host = host or host_resources()
    return auto_jobs(host, [need_of(group, host) for group in groups])


async def run_groups(
    groups: Sequence[LaunchGroup],
    run: Callable[[LaunchGroup], Awaitable[None]],
    *,
    jobs: Jobs = 1,
    host: Host | None = None,
) -> None:
    """``run`` every group; with ``jobs`` above 1 (or ``auto`` sizing above 1), several at once."""
    count = lanes(groups, jobs, host)
    if count == 1:  # ``auto`` on a host that holds one group: exactly as --jobs 1
        for group in groups:
            await run(group)
        return
    host = host or host_resources()
    needs = [need_of(group, host) for group in groups]
    # A number asked for on a host without GPUs shares its cores (see resources).
    ledger = Ledger(host, count, share_cores=jobs != "auto" and not host.devices)
    pairs = dict(zip(map(id, groups), needs, strict=True))
    ordered = [(group, pairs[id(group)]) for group in interleaved(groups)]
    await _concurrently(ordered, run, ledger, host)


async def _concurrently(
    pending: list[tuple[LaunchGroup, Need]],
    run: Callable[[LaunchGroup], Awaitable[None]],
    ledger: Ledger,
    host: Host,
) -> None:
    share = HostShare()
    failures: list[tuple[LaunchGroup, Exception]] = []

    async def one(group: LaunchGroup, need: Need, devices: tuple[str, ...]) -> None:
        try:
            with placed(Slot(group.lead.recipe.id, share, devices, host.pci_order)):
                await run(group)
        except Exception as exc:  # a failed group stops itself, not the groups beside it
            logger.warning("launch group %s failed (%s: %s); the other groups go on",
                           ", ".join(group.recipes), type(exc).__name__, exc)  # fmt: skip
            failures.append((group, exc))
        finally:
            ledger.give(devices, need)

    running: set[asyncio.Task[None]] = set()
    try:
        while pending or running:
            # First fit in plan order: a group waits only while what it needs is taken.
            waiting = []
            for group, need in pending:
                devices = ledger.take(need)
                if devices is None:
                    waiting.append((group, need))
                else:
                    running.add(asyncio.create_task(one(group, need, devices)))
            pending = waiting
            assert running, "needs are capped at the host's, so a group always fits"
            finished, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            for task in finished:
                task.result()  # only a cancellation gets here: failures are kept above
    finally:
        for task in running:
            task.cancel()  # an interrupted run stops every group's servers before it ends
        await asyncio.gather(*running, return_exceptions=True)
    if failures:
        raise _reported(failures)


def _reported(failures: list[tuple[LaunchGroup, Exception]]) -> Exception:
    """The first failure, as it is raised alone, with a note per other failed group."""
    first = failures[0][1]
    for group, exc in failures[1:]:
        first.add_note(f"launch group {', '.join(group.recipes)} also failed: "
                       f"{type(exc).__name__}: {exc}")  # fmt: skip
    return first
