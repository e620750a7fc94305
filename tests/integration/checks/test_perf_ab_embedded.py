"""The perf-ab gate on the real embedded target (vLLM-Omni 0.30 on CPU, bundled sd3-tiny): the
row's recipe and its reference launched side by side each round, on this host.

The shipped spec measures the row's recipe against itself when no reference recipe is named (an
A/A run): it passes. The same gate fails a candidate made 30 % slower, each of its launches
behind a proxy that holds every answer back by 0.3 times the time the server took for it
(:mod:`tests.integration.embedded.slowing_proxy`), the reference beside it unchanged. Against
the committed baseline a 30 % regression is inconclusive on this class of host (its sessions
spread 6.9 %); against a reference measured beside it, the host's state cancels in each round's
ratio. The record_property lines carry every round's figures and the interval.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from omniqual.checks.base import CheckContext, PointLaunch, TargetInfo
from omniqual.checks.perf_ab import PerfAbCheck, PerfAbParams
from omniqual.client import OmniClient
from omniqual.domain.axes import RowKey
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.recipe import LaunchRecipe
from omniqual.specs.source import load_yaml
from tests.fakes.memory_sink import MemorySink
from tests.integration.checks.test_perf_embedded import (
    ROOT,
    Prepared,
    _Launcher,
    committed_baseline,
    prepared,
)
from tests.integration.embedded.embedded_server import EMBEDDED_MARKS

pytestmark = EMBEDDED_MARKS
__all__ = ["prepared"]  # the fixture, shared with the perf gate's live test


class _Arms:
    """Fresh launches of both arms; the candidate's behind the slowing proxy when asked."""

    def __init__(self, prepared: Prepared, tmp: Path, slower_by: float) -> None:
        _, model, directory, _ = prepared
        self.plain = _Launcher(model, directory, tmp / "reference", 0.0)
        self.slowed = _Launcher(model, directory, tmp / "candidate", slower_by)

    @asynccontextmanager
    async def serve(self, recipe: LaunchRecipe) -> AsyncIterator[PointLaunch]:
        launcher = self.slowed if recipe.id.endswith("--candidate") else self.plain
        async with launcher.serve(recipe) as point:
            yield point


def run_gate(prepared: Prepared, tmp: Path, slower_by: float = 0.0) -> tuple[GateOutcome,
                                                                          dict[str, object],
                                                                          tuple[str, ...]]:
    recipe, _, _, provenance = prepared
    spec = GateSpec.model_validate(load_yaml(ROOT / "gates" / "perf-ab.yaml").data)
    for side in ("reference", "candidate"):
        (tmp / side).mkdir(parents=True, exist_ok=True)
    arms = _Arms(prepared, tmp, slower_by)
    ctx = CheckContext(
        gate=spec, row=RowKey.parse(committed_baseline().row),
        target=TargetInfo(url=None, recipe=recipe, label=recipe.id), artifacts=MemorySink(),
        project_root=ROOT, make_client=lambda: OmniClient("http://unused.invalid"),
        serve_point=arms.serve, provenance=provenance,
    )  # fmt: skip
    outcome = asyncio.run(PerfAbCheck().run(ctx, PerfAbParams.model_validate(spec.params)))
    block = outcome.effective["perf_ab"]
    assert isinstance(block, dict)
    return outcome.outcome, dict(block), outcome.reasons


def test_perf_ab_passes_an_aa_run_and_fails_a_candidate_30_percent_slower(
        prepared: Prepared, tmp_path: Path, record_property: Callable[[str, object], None],
) -> None:  # fmt: skip
    same, block, reasons = run_gate(prepared, tmp_path / "aa")
    record_property("perf_ab_aa", f"{same.value} {block['round_means']} {block['comparison']}")
    assert same is GateOutcome.PASSED, f"{'; '.join(reasons)}; rounds {block['round_means']}"
    slowed, block, reasons = run_gate(prepared, tmp_path / "slowed", slower_by=0.3)
    record_property("perf_ab_30pct", f"{slowed.value} {block['round_means']} "
                                     f"{block['comparison']}")  # fmt: skip
    assert slowed is GateOutcome.FAILED, f"{'; '.join(reasons)}; rounds {block['round_means']}"
    assert reasons[0].startswith("latency_mean regressed: the candidate +")
