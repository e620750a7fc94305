"""Running the isolation gate against an in-process fake, and the fakes its proof must see
through: a deployment that refuses every request sent while another is in flight, a serial one
whose very first request is cold, one that computes a request with the seed or prompt of the
request in flight beside it, one that ignores a knob, and one that does not reproduce one
request alone."""

from __future__ import annotations

import asyncio
import json
import secrets
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx

from omniqual.checks.base import CheckOutcome
from omniqual.checks.isolation import IsolationCheck, IsolationParams
from omniqual.domain.axes import RowKey
from tests.fakes.check_context import context
from tests.fakes.fake_batching import BatchingFakeOmni
from tests.fakes.fake_config import FakeConfig, FakeFaults
from tests.fakes.fake_omni import FakeOmni

ROOT = Path(__file__).resolve().parents[4]
GENERATIONS = "/v1/images/generations"


def run(server: FakeOmni, *, model: str = "sd3-tiny", api_mode: str = "images-generations",
        execution: str | None = None, **overrides: Any) -> CheckOutcome:  # fmt: skip
    params = IsolationParams(**{"orders": 2, "patterns": ("burst", "staggered"), **overrides})
    ctx, _ = context("isolation", api_mode, fake=server, root=ROOT)
    task = "t2v" if api_mode.startswith("videos") else "t2i"
    axes = [("model", model), ("task", task), ("api_mode", api_mode)]
    ctx = replace(ctx, row=RowKey((*axes, *([("execution", execution)] if execution else []))))
    return asyncio.run(IsolationCheck().run(ctx, params))


def fake(cls: type[FakeOmni] = FakeOmni, **faults: Any) -> FakeOmni:
    return cls(FakeConfig(image_work_s=0.08, video_queue_s=0.02, video_run_s=0.1,
                          faults=FakeFaults(**faults)))  # fmt: skip


def recorded(outcome: CheckOutcome) -> dict[str, Any]:
    found = outcome.effective["isolation"]
    assert isinstance(found, dict)
    return found


def table(outcome: CheckOutcome) -> list[dict[str, Any]]:
    rows = recorded(outcome)["table"]
    assert isinstance(rows, list)
    return rows


def measured(outcome: CheckOutcome) -> dict[str, float]:
    return {m.name: m.value for m in outcome.measurements}


def _rewritten(request: httpx.Request, **changes: object) -> httpx.Request:
    body = {**json.loads(request.content), **changes}
    return httpx.Request(request.method, request.url, json=body)


class RefusingFakeOmni(FakeOmni):
    """Behind a proxy that answers 429, with a clear message, to any generation sent while
    another is in flight: every request is served right alone, none is ever served together."""

    in_flight: int = 0

    async def handle_async(self, request: httpx.Request) -> httpx.Response:
        if request.method != "POST" or request.url.path != GENERATIONS:
            return await super().handle_async(request)
        if self.in_flight:
            return httpx.Response(429, json={"error": {
                "message": "Too Many Requests: one request at a time", "code": 429}})  # fmt: skip
        self.in_flight += 1
        try:
            return await super().handle_async(request)
        finally:
            self.in_flight -= 1


class ColdSerialFakeOmni(BatchingFakeOmni):
    """One request in the server at a time (``serializes_requests``), and the first generation
    it ever serves takes ``cold_s`` longer (loading, compiling)."""

    cold_s: float = 0.5
    warmed: bool = False

    async def handle_async(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and request.url.path == GENERATIONS and not self.warmed:
            self.warmed = True
            await asyncio.sleep(self.cold_s)
        return await super().handle_async(request)


class CrossingFakeOmni(FakeOmni):
    """Computes a generation that arrives while another is in flight with that one's
    ``crossed`` field (``seed`` or ``prompt``); a request served alone is right."""

    crossed: str = "seed"
    flying: list[dict[str, object]] | None = None

    async def handle_async(self, request: httpx.Request) -> httpx.Response:
        if request.method != "POST" or request.url.path != GENERATIONS:
            return await super().handle_async(request)
        if self.flying is None:
            self.flying = []
        body: dict[str, object] = json.loads(request.content)
        if self.flying:
            request = _rewritten(request, **{self.crossed: self.flying[0][self.crossed]})
        self.flying.append(body)
        try:
            return await super().handle_async(request)
        finally:
            self.flying.remove(body)


class IgnoringFakeOmni(FakeOmni):
    """Ignores one integer request field (``ignored``): every request is computed with the same
    fixed value for it, so requests differing only there answer the same output."""

    ignored: str = "num_inference_steps"

    async def handle_async(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and request.url.path == GENERATIONS:
            request = _rewritten(request, **{self.ignored: 3})
        return await super().handle_async(request)


class FlakyFakeOmni(FakeOmni):
    """Serves the request with seed ``flaky_seed`` with a fresh random seed every time: that
    request alone answers another output on every call, all others reproduce."""

    flaky_seed: int = 33

    async def handle_async(self, request: httpx.Request) -> httpx.Response:
        flaky = request.method == "POST" and request.url.path == GENERATIONS and (
            json.loads(request.content).get("seed") == self.flaky_seed)  # fmt: skip
        if flaky:
            request = _rewritten(request, seed=secrets.randbits(31))
        return await super().handle_async(request)
