"""A fake ``serve_point`` launcher for offload-sweep tests: each point (by the name after ``--``
in the derived recipe id) serves an in-process ``FakeOmni`` (no sockets), serves outputs rewritten
by a mutation, serves without a known pid (no memory series), answers HTTP 500 to every request
of one seed (``FAILING_SEED``: those cases get no output), is refused with a log line, or hangs
until the recipe's readiness deadline, as the real launcher bounds it."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import httpx

from omniqual.checks.base import PointLaunch, TargetInfo
from omniqual.client import ClientTimeouts, OmniClient
from omniqual.deploy.launcher import StartupOutcome
from omniqual.domain.recipe import LaunchRecipe
from tests.fakes.fake_omni import FakeOmni

Behaviour = Literal["serve", "mutate", "no-pid", "fails-seed", "refuse", "hang"]
Mutate = Callable[[list[bytes]], list[bytes]]
FAILING_SEED = 987654


class _FailingSeed(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and json.loads(request.content or b"{}").get("seed") == (
                FAILING_SEED):  # fmt: skip
            return httpx.Response(500, json={"error": {"message": "engine died", "code": 500}})
        return await self.inner.handle_async_request(request)


class _Mutating(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport, mutate: Mutate) -> None:
        self.inner, self.mutate = inner, mutate

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if request.url.path != "/v1/images/generations" or response.status_code != 200:
            return response
        body = json.loads(await response.aread())
        images = [base64.b64decode(d["b64_json"]) for d in body["data"]]
        body["data"] = [{"b64_json": base64.b64encode(i).decode()} for i in self.mutate(images)]
        return httpx.Response(200, json=body)


@dataclass
class FakePoints:
    behaviours: dict[str, Behaviour]
    mutate: Mutate | None = None
    refusal: str = "RuntimeError: pin_memory=True requires a CUDA or other accelerator backend"
    launched: list[LaunchRecipe] = field(default_factory=list)
    live: int = 0
    max_live: int = 0
    waited_s: dict[str, float] = field(default_factory=dict)
    logs: dict[str, str] = field(default_factory=dict)
    """Point name -> the server log its launch writes (in ``log_dir``); others have none."""
    log_dir: Path | None = None

    def _startup(self, recipe: LaunchRecipe, ready: bool, reason: str, elapsed: float,
                 tail: tuple[str, ...] = ()) -> StartupOutcome:  # fmt: skip
        return StartupOutcome(
            recipe_id=recipe.id, expected=recipe.expect, became_ready=ready,
            reason=reason,  # type: ignore[arg-type]
            exit_code=1 if reason == "exited" else None, elapsed_s=elapsed, log_path=None,
            log_tail=tail, command=("vllm", "serve", recipe.id), expected_error_matched=None,
        )  # fmt: skip

    @asynccontextmanager
    async def serve(self, recipe: LaunchRecipe) -> AsyncIterator[PointLaunch]:
        self.launched.append(recipe)
        name = recipe.id.split("--", 1)[1]
        behaviour = self.behaviours.get(name, "serve")
        if behaviour == "refuse":
            yield PointLaunch(self._startup(recipe, False, "exited", 0.5, (self.refusal,)), None,
                              None)  # fmt: skip
            return
        if behaviour == "hang":
            started = time.monotonic()
            await asyncio.sleep(recipe.readiness.timeout_s)  # the launcher gives up here
            self.waited_s[name] = time.monotonic() - started
            yield PointLaunch(self._startup(recipe, False, "timeout", self.waited_s[name]), None,
                              None)  # fmt: skip
            return
        fake = FakeOmni()
        mutate = self.mutate if behaviour == "mutate" else None

        def make_client() -> OmniClient:
            inner: httpx.AsyncBaseTransport = fake.transport()
            transport = _Mutating(inner, mutate) if mutate is not None else inner
            if behaviour == "fails-seed":
                transport = _FailingSeed(transport)
            return OmniClient("http://point.invalid", transport=transport,
                              timeouts=ClientTimeouts())  # fmt: skip

        pid = None if behaviour == "no-pid" else os.getpid()
        log_path = None
        if name in self.logs and self.log_dir is not None:
            log_path = self.log_dir / f"{name}.log"
            log_path.write_text(self.logs[name], encoding="utf-8")
        target = TargetInfo(url="http://point.invalid", recipe=recipe, pid=pid, label=recipe.id,
                            log_path=log_path)  # fmt: skip
        self.live += 1
        self.max_live = max(self.max_live, self.live)
        try:
            yield PointLaunch(self._startup(recipe, True, "ready", 0.1), target, None, make_client)
        finally:
            self.live -= 1
