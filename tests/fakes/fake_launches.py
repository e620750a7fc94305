"""A fake ``serve_point`` for gates that launch the row's recipe themselves and judge its start-up:
each launch becomes ready ``ready_s`` after it began (on the running loop's clock, so a virtual
clock makes it instant) and then serves an in-process ``FakeOmni`` (no sockets) whose clock is
that loop's, counted from the moment it became ready: a ``FakeFaults.latency_spike`` starting at
0 s slows exactly the requests that arrive first after readiness. Or the launch never becomes
ready (``hangs``): the launcher gives up at the recipe's readiness deadline, its log ending in
``log``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from omniqual.checks.base import PointLaunch, TargetInfo
from omniqual.client import ClientTimeouts, OmniClient
from omniqual.deploy.launcher import StartupOutcome
from omniqual.domain.recipe import LaunchRecipe
from tests.fakes.fake_config import FakeConfig
from tests.fakes.fake_omni import FakeOmni


@dataclass
class FakeLaunches:
    config: FakeConfig = field(default_factory=FakeConfig)
    ready_s: float = 12.0
    hangs: bool = False
    log: tuple[str, ...] = ()
    """The launch's last log lines (what the launcher's log tail reads)."""
    launched: list[LaunchRecipe] = field(default_factory=list)
    servers: list[FakeOmni] = field(default_factory=list)

    def _startup(self, recipe: LaunchRecipe, ready: bool, elapsed_s: float) -> StartupOutcome:
        return StartupOutcome(
            recipe_id=recipe.id, expected=recipe.expect, became_ready=ready,
            reason="ready" if ready else "timeout", exit_code=None, elapsed_s=elapsed_s,
            log_path=None, log_tail=self.log, command=("vllm", "serve", recipe.id),
            expected_error_matched=None,
        )  # fmt: skip

    @asynccontextmanager
    async def serve(self, recipe: LaunchRecipe) -> AsyncIterator[PointLaunch]:
        self.launched.append(recipe)
        loop = asyncio.get_running_loop()
        if self.hangs:
            await asyncio.sleep(recipe.readiness.timeout_s)  # the launcher gives up here
            yield PointLaunch(self._startup(recipe, False, recipe.readiness.timeout_s), None, None)
            return
        await asyncio.sleep(self.ready_s)
        fake = FakeOmni(self.config, clock=loop.time)  # its origin: the moment it became ready
        self.servers.append(fake)
        url = f"http://{recipe.id}.invalid"

        def make_client() -> OmniClient:
            return OmniClient(url, transport=fake.transport(), timeouts=ClientTimeouts())

        target = TargetInfo(url=url, recipe=recipe, label=recipe.id)
        yield PointLaunch(self._startup(recipe, True, self.ready_s), target, None, make_client)
