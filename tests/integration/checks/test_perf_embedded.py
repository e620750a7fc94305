"""The perf gate against the real embedded target (vLLM-Omni 0.30 on CPU, bundled sd3-tiny),
judged by the committed CPU baseline of the SD3 baseline row.

The server is launched from the recipe the baseline was set on, and the run's provenance is
measured as the engine measures it (checkpoint manifest hash, serve config hash), so the
committed baseline judges it; the gate never says ``no baseline``. Then the same gate runs with
a 20 % slowdown injected client-side (each generation request held back by a fifth of the
baseline's mean latency before it is sent): it must never pass. The baseline was set from
several launches, and the interval is as wide as one new launch may fall from them: where
launches of one build differ by several percent (a shared 2-vCPU guest: 7 %, with the host's
reference workload unchanged), a 20 % slowdown is ``invalid: inconclusive``, which the gate
reports instead of a flake (a launch that happened to run 13 % faster once passed a 20 %
slowdown judged against one launch's repetitions); where they differ little, it fails. On a host
whose reference workload is not as fast as it was when the baseline was set (a neighbour,
hypervisor steal, another machine of the same class), neither run is judged: ``invalid`` naming
the host's speed. Skipped without vllm_omni.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from omniqual.checks.base import CheckContext, TargetInfo
from omniqual.checks.perf import PerfCheck, PerfParams
from omniqual.client import OmniClient
from omniqual.deploy.launcher import LaunchedTarget, launched
from omniqual.domain.axes import RowKey
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.provenance import Provenance
from omniqual.loadgen.host_speed import CHANGED_DURING, CONTENDED, DIFFERS
from omniqual.specs.perf_baseline import PerfBaseline, load_baseline
from omniqual.specs.recipes import load_recipes
from omniqual.specs.source import load_yaml
from tests.fakes.memory_sink import MemorySink
from tests.integration.embedded.embedded_server import EMBEDDED_MARKS

ROOT = Path(__file__).resolve().parents[3]
pytestmark = EMBEDDED_MARKS
BASELINES = ROOT / "gates" / "perf-baselines"
HOST_REASONS = (CHANGED_DURING, CONTENDED, DIFFERS)


def committed_baseline() -> PerfBaseline:
    [path] = [p for p in BASELINES.glob("sd3-tiny-images-generations-serial-1.*.yaml")]
    return load_baseline(path)


class _Slower(httpx.AsyncBaseTransport):
    """Holds every POST back by ``delay_s`` before sending it (a client-side slowdown)."""

    def __init__(self, delay_s: float) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.delay_s = delay_s

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            await asyncio.sleep(self.delay_s)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[LaunchedTarget, Provenance]]:
    from omniqual.engine.targets import prepare_model

    recipe = load_recipes(ROOT / "runners")[committed_baseline().serve.recipe or "sd3-tiny"]
    prepared = prepare_model(recipe.recipe, Provenance(), recipe.path.parent)
    private_tmp = tmp_path / "server-tmp"
    private_tmp.mkdir()
    with launched(recipe.recipe, model=prepared.model, log_path=tmp_path / "server.log",
                  state_dir=tmp_path / "state",
                  extra_env={"TMPDIR": str(private_tmp)}) as target:  # fmt: skip
        yield target, prepared.provenance


def run_gate(target: LaunchedTarget, provenance: Provenance, delay_s: float = 0.0,
             ) -> tuple[GateOutcome, dict[str, object], tuple[str, ...]]:  # fmt: skip
    spec = GateSpec.model_validate(load_yaml(ROOT / "gates" / "perf.yaml").data)
    baseline = committed_baseline()

    def client() -> OmniClient:
        transport = _Slower(delay_s) if delay_s else None
        return OmniClient(target.url, transport=transport)

    ctx = CheckContext(
        gate=spec, row=RowKey.parse(baseline.row),
        target=TargetInfo(url=target.url, pid=target.pid, label=target.recipe_id),
        artifacts=MemorySink(), project_root=ROOT, make_client=client, provenance=provenance,
    )  # fmt: skip
    ctx = replace(ctx, target=replace(ctx.target, recipe=load_recipes(ROOT / "runners")[
        target.recipe_id].recipe))  # fmt: skip
    params = PerfParams.model_validate(spec.params)
    outcome = asyncio.run(PerfCheck().run(ctx, params))
    perf = outcome.effective["perf"]
    assert isinstance(perf, dict)
    return outcome.outcome, perf, outcome.reasons


def test_perf_gate_on_sd3_tiny_against_the_committed_baseline(
    served: tuple[LaunchedTarget, Provenance], record_property: pytest.RecordProperty
) -> None:
    target, provenance = served
    baseline = committed_baseline()
    outcome, perf, reasons = run_gate(target, provenance)
    record_property("perf_unchanged", f"{outcome.value} {perf['comparison']} {perf['host']}")
    record_property("perf_unchanged_reasons", "; ".join(reasons))
    assert perf["comparison"] is not None, reasons  # the committed baseline judged this run
    assert outcome is not GateOutcome.FAILED, reasons
    assert perf["host"] is not None  # the server is on this host: its speed was probed
    slowed, perf_slow, reasons_slow = run_gate(target, provenance,
                                               delay_s=0.2 * baseline.evidence.mean)
    record_property("perf_slowed_20pct", f"{slowed.value} {perf_slow['comparison']}")
    record_property("perf_slowed_reasons", "; ".join(reasons_slow))
    comparison = perf_slow["comparison"]
    assert isinstance(comparison, dict)
    assert slowed is not GateOutcome.PASSED, reasons_slow
    if slowed is GateOutcome.FAILED:
        assert comparison["low"] > baseline.threshold
    elif reasons_slow[0].startswith(HOST_REASONS):
        pass  # this host's speed is not the baseline's: it judges nothing (and says so)
    else:
        assert "inconclusive" in reasons_slow[0], reasons_slow
        assert comparison["high"] > baseline.threshold
