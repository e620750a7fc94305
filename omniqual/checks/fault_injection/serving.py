"""A server carrying the fault injector, for the fault-injection gate alone.

A launched target is launched again from its recipe with the injector's variables (and a
private TMPDIR) through the context's ``serve_point``: a separate process tree that no other gate
uses, stopped after the block, so a fault can never touch another gate's evidence. A deployment
given by URL carries the injector only when its user started it so (``OMNIQUAL_FAULT_CONTROL``,
``OMNIQUAL_FAULT_RECORD`` and the bootstrap on ``PYTHONPATH``) and named both paths in the
params, or started ``omniqual agent`` beside it with the same files (``--agent``); either way the
injector must have recorded loading, or there is no injector.
"""

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

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


async def loaded_since(channel: FaultControl, since_unix: float, within_s: float) -> set[int]:
    """Pids that recorded loading the injector since ``since_unix`` (waits up to ``within_s``)."""
    deadline = time.monotonic() + within_s
    while True:
        pids = {r.pid for r in await channel.records()
                if r.event is FaultEvent.LOADED and r.at_unix >= since_unix}  # fmt: skip
        if pids or time.monotonic() >= deadline:
            return pids
        await asyncio.sleep(0.2)


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
        if not await loaded_since(channel, started - 1.0, 10.0):
            yield f"{NO_INJECTOR}: no process of the launched tree recorded loading it"
            return
        yield Served(point.target.url, point.target.pid, point.make_client, channel)


@asynccontextmanager
async def given(ctx: CheckContext, url: str, channel: FaultControl,
                ) -> AsyncIterator[Served | str]:  # fmt: skip
    try:
        loaded = await loaded_since(channel, 0.0, 0.0)
    except ControlError as exc:
        yield str(exc)
        return
    if not loaded:
        yield (f"{NO_INJECTOR}: {channel.describe()} holds no record of the injector loading in "
               "the server")  # fmt: skip
        return
    make = ctx.make_client if ctx.target.url == url else (lambda: OmniClient(url))
    yield Served(url, ctx.target.pid, make, channel)
