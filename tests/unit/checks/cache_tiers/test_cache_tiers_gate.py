"""The cache-tiers gate on fakes, on a virtual clock: a clean fake gives a frontier and a tier
mapping; a point whose log shows no cache hits is inactive and never a speedup; a point whose
cache state leaks into the next request fails."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from omniqual.checks.base import CheckContext, CheckOutcome, PointLaunch, TargetInfo
from omniqual.checks.cache_tiers import CacheTiersCheck, CacheTiersParams
from omniqual.checks.cache_tiers.hits import hits_in
from omniqual.deploy.launcher import StartupOutcome
from omniqual.domain.axes import RowKey
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.recipe import LaunchRecipe
from omniqual.loadgen.workload import EndpointKind
from tests.fakes.memory_sink import MemorySink
from tests.unit.loadgen.conftest import _run_virtual

BASE = LaunchRecipe(id="sd3-cache", description="cache row", kind="embedded", pipeline="sd3-tiny",
                    flags={"cache-backend": "cache_dit"})  # fmt: skip
PARAMS = CacheTiersParams.model_validate({
    "points": [{"name": "t012", "cache_config": {"residual_diff_threshold": 0.12}},
               {"name": "t024", "cache_config": {"residual_diff_threshold": 0.24}},
               {"name": "t001", "cache_config": {"residual_diff_threshold": 0.01}}],
    "tiers": [{"name": "high", "min_psnr_db": 30, "min_ssim": 0.9},
              {"name": "medium", "min_psnr_db": 15, "min_ssim": 0.5}],
    "steps": 8, "alternate_steps": 2, "repetitions": 3,
})  # fmt: skip


def png(seed: int, steps: int, noise: float) -> bytes:
    rng = np.random.default_rng(seed * 100 + steps)
    pixels = rng.integers(0, 200, size=(32, 32, 3)).astype(np.float64)
    pixels += np.random.default_rng(seed).normal(0, noise, size=pixels.shape)
    buffer = io.BytesIO()
    Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8)).save(buffer, format="PNG")
    return buffer.getvalue()


@dataclass
class FakeServer:
    """``cached`` steps of a request at ``steps`` (none within 4 warm-up steps), each saving
    ``saving_s`` and adding ``noise`` to the image; ``leaks``: the request after a short one keeps
    its stale state (its image changes)."""

    log: Path
    cached: int = 0
    noise: float = 0.0
    leaks: bool = False
    step_s: float = 0.05
    last_steps: int = 0

    async def __aenter__(self) -> FakeServer:
        return self

    async def __aexit__(self, *_: object) -> None:
        return None

    async def answer(self, seed: int, steps: int) -> bytes:
        cached = self.cached if steps > 4 else 0
        await asyncio.sleep(self.step_s * (steps - cached))
        stale = self.leaks and self.last_steps and self.last_steps != steps
        self.last_steps = steps
        with self.log.open("a") as handle:
            handle.write(f"INFO Cache Steps: {cached}, {list(range(4, 4 + cached))}\n")
        return png(seed, steps, self.noise * cached + (9.0 if stale else 0.0))


async def fake_ask(client: Any, _p: CacheTiersParams, _e: EndpointKind, seed: int,
                   steps: int) -> tuple[bytes | None, str | None]:  # fmt: skip
    return await client.answer(seed, steps), None


@dataclass
class FakeLauncher:
    servers: dict[str, FakeServer]
    launched: list[str] = field(default_factory=list)

    @asynccontextmanager
    async def serve(self, recipe: LaunchRecipe) -> AsyncIterator[PointLaunch]:
        name = recipe.id.split("--", 1)[1]
        self.launched.append(name)
        server = self.servers[name]
        startup = StartupOutcome(recipe_id=recipe.id, expected=recipe.expect, became_ready=True,
                                 reason="ready", exit_code=None, elapsed_s=1.0, log_path=None,
                                 log_tail=(), command=("vllm", "serve"),
                                 expected_error_matched=None)  # fmt: skip
        target = TargetInfo(url="http://fake.invalid", recipe=recipe, log_path=server.log)
        yield PointLaunch(startup, target, None, make_client=lambda: server)  # type: ignore[arg-type,return-value]


def run(tmp: Path, **points: FakeServer) -> tuple[CheckOutcome, MemorySink, FakeLauncher]:
    servers = {"lossless": FakeServer(tmp / "lossless.log"), **points}
    for server in servers.values():
        server.log.touch()
    launcher, sink = FakeLauncher(servers), MemorySink()
    key = RowKey((("model", "sd3-tiny"), ("task", "t2i"), ("api_mode", "images-generations"),
                  ("cache_policy", "cache_dit")))  # fmt: skip
    ctx = CheckContext(gate=GateSpec(id="cache-tiers", kind="cache_tiers", version=1), row=key,
                       target=TargetInfo(url=None, recipe=BASE), artifacts=sink,
                       project_root=tmp, make_client=lambda: None,  # type: ignore[arg-type,return-value]
                       serve_point=launcher.serve)  # fmt: skip
    outcome = _run_virtual(CacheTiersCheck(ask=fake_ask).run(ctx, PARAMS))
    return outcome, sink, launcher


def test_a_clean_sweep_gives_a_frontier_and_a_tier_mapping(tmp_path: Path) -> None:
    outcome, sink, launcher = run(
        tmp_path, t012=FakeServer(tmp_path / "a.log", cached=2, noise=0.5),
        t024=FakeServer(tmp_path / "b.log", cached=4, noise=6.0),
        t001=FakeServer(tmp_path / "c.log", cached=0))  # fmt: skip
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert launcher.launched == ["lossless", "t012", "t024", "t001"]
    block = json.loads(sink.blobs["cache-tiers.json"])
    status = {p["name"]: p["status"] for p in block["points"]}
    assert status == {"lossless": "lossless", "t012": "active", "t024": "active",
                      "t001": "inactive"}  # fmt: skip
    # t012 is faster than lossless and not worse beyond the SSIM resolution: it dominates it.
    assert block["frontier"] == ["t024", "t012"]
    assert block["tiers"]["high"]["point"] == "t012"
    assert block["tiers"]["medium"]["point"] == "t024"
    assert block["tiers"]["lossless"]["point"] == "lossless"
    assert "first cached step 4" in block["engages"]
    assert sink.blobs["cache-tiers frontier.svg"].lstrip().startswith(b"<?xml")


def test_a_point_without_hits_is_inactive_never_a_speedup(tmp_path: Path) -> None:
    fast_but_silent = FakeServer(tmp_path / "a.log", cached=0, step_s=0.01)
    outcome, sink, _ = run(tmp_path, t012=fast_but_silent,
                           t024=FakeServer(tmp_path / "b.log"),
                           t001=FakeServer(tmp_path / "c.log"))  # fmt: skip
    assert outcome.outcome is GateOutcome.INVALID
    assert "no cache point was shown active" in outcome.reasons[0]
    block = json.loads(sink.blobs["cache-tiers.json"])
    assert block["frontier"] == ["lossless"]
    assert all(t["point"] == "lossless" for t in block["tiers"].values())


def test_a_policy_leaking_into_the_next_request_fails(tmp_path: Path) -> None:
    outcome, _, _ = run(tmp_path, t012=FakeServer(tmp_path / "a.log", cached=2, leaks=True),
                        t024=FakeServer(tmp_path / "b.log", cached=4, noise=6.0),
                        t001=FakeServer(tmp_path / "c.log"))  # fmt: skip
    assert outcome.outcome is GateOutcome.FAILED
    assert outcome.reasons[0].startswith("t012: leaked policy")


def test_hits_are_read_from_the_cache_dit_summary() -> None:
    text = ("| Cache Steps | Diffs P00 |\nCache Steps: 3, [4, 6, 7]\n"
            "Residual Diffs: 3, {'4': 0.08, '6': 0.11, '7': 0.1}\n")  # fmt: skip
    hits = hits_in(text)
    assert hits is not None and hits.cached == 3 and hits.steps == (4, 6, 7)
    assert hits.diffs == (0.08, 0.11, 0.1)
    assert hits_in("nothing logged") is None
