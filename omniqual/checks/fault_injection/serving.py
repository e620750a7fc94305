"""A server carrying the fault injector, for the fault-injection gate alone.

A launched target is launched again from its recipe with the injector's variables (and a
private TMPDIR) through the context's ``serve_point``: a separate process tree that no other gate
uses, stopped after the block, so a fault can never touch another gate's evidence. A deployment
given by URL carries the injector only when its user started it so (``OMNIQUAL_FAULT_CONTROL``,
``OMNIQUAL_FAULT_RECORD`` and the bootstrap on ``PYTHONPATH``) and named both paths in the
params; either way the injector must have recorded loading, or there is no injector.
"""

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from omniqual.checks.base import CheckContext
from omniqual.checks.fault_injection.driver import Served
from omniqual.checks.fault_injection.params import FaultInjectionParams
from omniqual.client import OmniClient
from omniqual.deploy.fault_control import FaultChannel
from omniqual.domain.evidence import Artifact
from omniqual.domain.fault_injection import FaultEvent
from omniqual.domain.recipe import RecipeKind

NO_INJECTOR = "no injector"


def given_url(ctx: CheckContext) -> str | None:
    recipe = ctx.target.recipe
    if recipe is not None and recipe.kind is RecipeKind.URL:
        return recipe.url
    return ctx.target.url if ctx.serve_point is None else None


def url_channel(params: FaultInjectionParams) -> FaultChannel | str:
    if params.control_path is None or params.record_path is None:
        return (f"{NO_INJECTOR}: a deployment given by URL must be started with the injector "
                "(OMNIQUAL_FAULT_CONTROL, OMNIQUAL_FAULT_RECORD, its bootstrap on PYTHONPATH) and "
                "the gate given both paths (params control_path, record_path)")  # fmt: skip
    return FaultChannel(Path(params.control_path), Path(params.record_path))


async def loaded_since(channel: FaultChannel, since_unix: float, within_s: float) -> set[int]:
    """Pids that recorded loading the injector since ``since_unix`` (waits up to ``within_s``)."""
    deadline = time.monotonic() + within_s
    while True:
        pids = {r.pid for r in channel.records()
                if r.event is FaultEvent.LOADED and r.at_unix >= since_unix}  # fmt: skip
        if pids or time.monotonic() >= deadline:
            return pids
        await asyncio.sleep(0.2)


@asynccontextmanager
async def instrumented(ctx: CheckContext, channel: FaultChannel, temp: Path, launch_no: int,
                       logs: list[Artifact]) -> AsyncIterator[Served | str]:  # fmt: skip
    """The target's recipe launched again with the injector; a reason when it did not serve."""
    recipe = ctx.target.recipe
    if ctx.serve_point is None or recipe is None:
        yield f"{NO_INJECTOR}: the engine cannot launch this target with the injector"
        return
    env = {**recipe.env, **channel.env(), "TMPDIR": str(temp)}
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
async def given(ctx: CheckContext, url: str, channel: FaultChannel,
                ) -> AsyncIterator[Served | str]:  # fmt: skip
    if not await loaded_since(channel, 0.0, 0.0):
        yield (f"{NO_INJECTOR}: {channel.record} holds no record of the injector loading in "
               "the server")  # fmt: skip
        return
    make = ctx.make_client if ctx.target.url == url else (lambda: OmniClient(url))
    yield Served(url, ctx.target.pid, make, channel)
