"""A server carrying the fault injector, for the fault-injection gate alone.

A launched target is launched again from its recipe with the injector's variables (and a
private TMPDIR) through the context's ``serve_point``: a separate process tree that no other gate
uses, stopped after the block, so a fault can never touch another gate's evidence. A deployment
given by URL carries the injector only when its user started it so (``OMNIQUAL_FAULT_CONTROL``,
``OMNIQUAL_FAULT_RECORD`` and the bootstrap on ``PYTHONPATH``) and named both paths in the
params, or started ``omniqual agent`` beside it with the same files (``--agent``); either way the
injector must have recorded loading since the server started, or there is no injector: a record
file outlives its server, and a ``loaded`` line of a previous server says nothing of this one.
A launch is dated by the harness's own clock before it; a server given by URL by its root
process's start where its pid is known on this host, else not at all (said in the result: a
fault that then never fires is still invalid, never a pass).
"""

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path

import psutil

from omniqual.checks.base import CheckContext
from omniqual.checks.fault_injection.control import (
    NO_INJECTOR,
    ControlError,
    FaultControl,
    FileControl,
)
from omniqual.checks.fault_injection.driver import Served
from omniqual.client import OmniClient
from omniqual.domain.evidence import Artifact
from omniqual.domain.fault_injection import FaultEvent
from omniqual.domain.recipe import RecipeKind


def given_url(ctx: CheckContext) -> str | None:
    recipe = ctx.target.recipe
    if recipe is not None and recipe.kind is RecipeKind.URL:
        return recipe.url
    return ctx.target.url if ctx.serve_point is None else None


# psutil dates a process from the boot time /proc/stat gives in whole seconds and from clock
# ticks, so a start read that way can be off by about a second: records count from a second
# before it. A previous server's record within that second would need that server stopped and
# this one started in between.
START_SLACK_S = 1.0


async def loaded_since(channel: FaultControl, since_unix: float, within_s: float) -> set[int]:
    """Pids that recorded loading the injector since ``since_unix`` (waits up to ``within_s``)."""
    deadline = time.monotonic() + within_s
    while True:
        pids = {r.pid for r in await channel.records()
                if r.event is FaultEvent.LOADED and r.at_unix >= since_unix}  # fmt: skip
        if pids or time.monotonic() >= deadline:
            return pids
        await asyncio.sleep(0.2)


def server_start(pid: int | None, channel: FaultControl) -> float | None:
    """When the server's root process started, where this host can tell (its pid runs here)."""
    if pid is None or not channel.local:
        return None
    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return None


def _at(unix: float) -> str:
    return datetime.fromtimestamp(unix, UTC).isoformat(timespec="seconds")


@asynccontextmanager
async def instrumented(ctx: CheckContext, channel: FileControl, temp: Path, launch_no: int,
                       logs: list[Artifact]) -> AsyncIterator[Served | str]:  # fmt: skip
    """The target's recipe launched again with the injector; a reason when it did not serve."""
    recipe = ctx.target.recipe
    if ctx.serve_point is None or recipe is None:
        yield f"{NO_INJECTOR}: the engine cannot launch this target with the injector"
        return
    env = {**recipe.env, **channel.channel.env(), "TMPDIR": str(temp)}
    derived = recipe.model_copy(update={"id": f"{recipe.id}-faults{launch_no}", "env": env})
    started = time.time()
    async with ctx.serve_point(derived) as point:
        if point.log_artifact is not None:
            logs.append(point.log_artifact)
        if point.target is None or point.target.url is None or point.make_client is None:
            yield (f"the launch with the injector did not serve ({point.startup.reason}, "
                   f"exit code {point.startup.exit_code})")  # fmt: skip
            return
        # The record file is the gate's, shared by its launches: only this launch's lines count.
        pids = await loaded_since(channel, started, 10.0)
        if not pids:
            yield f"{NO_INJECTOR}: no process of the launched tree recorded loading it"
            return
        yield Served(point.target.url, point.target.pid, point.make_client, channel,
                     loaded=f"loaded in pid(s) {sorted(pids)[:8]} since the launch at "
                            f"{_at(started)}")  # fmt: skip


@asynccontextmanager
async def given(ctx: CheckContext, url: str, channel: FaultControl,
                ) -> AsyncIterator[Served | str]:  # fmt: skip
    start = server_start(ctx.target.pid, channel)
    try:
        ever = await loaded_since(channel, 0.0, 0.0)
        pids = ever if start is None else await loaded_since(channel, start - START_SLACK_S, 0.0)
    except ControlError as exc:
        yield str(exc)
        return
    if not pids:
        older = (f": its `loaded` record(s) of pid(s) {sorted(ever)[:8]} are older than the "
                 f"server's start (pid {ctx.target.pid} at {_at(start)}), a previous server's"
                 if ever and start is not None else "")  # fmt: skip
        yield (f"{NO_INJECTOR}: {channel.describe()} holds no record of the injector loading in "
               f"the server{older}")  # fmt: skip
        return
    loaded = (f"loaded in pid(s) {sorted(pids)[:8]} since the server's start ({_at(start)})"
              if start is not None else
              f"loaded in pid(s) {sorted(pids)[:8]}; the server's start is not known here (no "
              "pid of it on this host), so the records are not dated against it")  # fmt: skip
    make = ctx.make_client if ctx.target.url == url else (lambda: OmniClient(url))
    yield Served(url, ctx.target.pid, make, channel, loaded=loaded)
