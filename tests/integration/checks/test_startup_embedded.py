"""The start-up gate against the real embedded target (vLLM-Omni 0.30 on CPU, bundled sd3-tiny,
the SD3 baseline row): the gate launches the recipe fresh itself, as the engine lets it, times
it to ready, sends the contract's probe at /health's first 200 and five warm ones after it. The
served embedded target passes; the measured times are recorded for whoever sets the bounds
(gates/startup.yaml says what was measured here)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from omniqual.checks.base import CheckContext, TargetInfo
from omniqual.checks.startup import StartupCheck, StartupParams
from omniqual.client import OmniClient
from omniqual.domain.axes import RowKey
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.provenance import Provenance
from omniqual.specs.recipes import load_recipes
from omniqual.specs.source import load_yaml
from tests.fakes.memory_sink import MemorySink
from tests.integration.checks.test_perf_embedded import _Launcher
from tests.integration.embedded.embedded_server import EMBEDDED_MARKS

ROOT = Path(__file__).resolve().parents[3]
# The gate's own track (gates/startup.yaml): reliability.
pytestmark = [*EMBEDDED_MARKS, pytest.mark.reliability]
ROW = RowKey((("model", "sd3-tiny"), ("task", "t2i"), ("api_mode", "images-generations"),
              ("output_transport", "b64-json")))  # fmt: skip


def test_startup_gate_on_sd3_tiny_passes(
    tmp_path: Path, record_property: pytest.RecordProperty
) -> None:
    from omniqual.engine.targets.targets import prepare_model

    loaded = load_recipes(ROOT / "runners")["sd3-tiny"]
    model = prepare_model(loaded.recipe, Provenance(), loaded.path.parent)
    spec = GateSpec.model_validate(load_yaml(ROOT / "gates" / "startup.yaml").data)
    launcher = _Launcher(model.model, loaded.path.parent, tmp_path, 0.0)
    ctx = CheckContext(
        gate=spec, row=ROW, target=TargetInfo(url=None, recipe=loaded.recipe, label="sd3-tiny"),
        artifacts=MemorySink(), project_root=ROOT,
        make_client=lambda: OmniClient("http://unused.invalid"), serve_point=launcher.serve,
        provenance=model.provenance,
    )  # fmt: skip
    outcome = asyncio.run(StartupCheck().run(ctx, StartupParams.model_validate(spec.params)))
    effective = outcome.effective
    for name in ("time_to_ready_s", "handoff_s", "first_request_s", "ready_to_first_answer_s",
                 "warm_s", "warm_median_s", "first_to_warm_ratio"):  # fmt: skip
        record_property(name, str(effective.get(name)))
    record_property("reasons", "; ".join(outcome.reasons))
    assert launcher.launched == ["sd3-tiny-startup"]  # one fresh launch, its own
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
