"""The start-up gate against the real embedded target (vLLM-Omni 0.30 on CPU), on every bundled
pipeline's baseline row: the gate launches the recipe fresh itself, as the engine lets it, times
it to ready, sends the row's contract probe at /health's first 200 and five warm ones after it.
Each served embedded pipeline passes; the measured times are recorded for whoever sets the
bounds (gates/startup.yaml says what was measured here)."""

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
BASELINES = [
    ("sd3-tiny", "t2i", "images-generations", "b64-json"),
    ("sd3-tiny", "t2i", "chat-completions", "data-url"),
    ("qwen-image-tiny", "t2i", "images-generations", "b64-json"),
    ("qwen-image-edit-tiny", "i2i", "images-edits", "b64-json"),
    ("wan-t2v-tiny", "t2v", "videos-async", "async-artifact"),
    ("wan-t2v-tiny", "t2v", "videos-sync", "mp4-bytes"),
    ("stable-audio-tiny", "t2a", "audio-generate", "wav-bytes"),
]
"""Every baseline row of the embedded matrix requires the start-up gate: (recipe, task, API
mode, output transport) of each. Measured here, ready after / first request / warm median:
SD3 images 17-20 s / 0.16-0.20 s / 0.13-0.15 s, SD3 chat 17.0 s / 0.17 s / 0.14 s, Qwen-Image
24.5 s / 0.20 s / 0.16 s, Qwen-Image-Edit 54.1 s / 31.2 s / 28.9 s (its probe's source is
resized to a 1024x1024 area: ~4 min for the six requests), Wan async 15.0 s / 0.56 s / 0.52 s,
Wan sync 15.0 s / 0.42 s / 0.24 s, Stable Audio 13.5 s / 0.12 s / 0.07 s: at most 1.8x warm."""


@pytest.mark.parametrize(("recipe", "task", "api_mode", "transport"), BASELINES)
def test_startup_gate_passes_on_every_bundled_baseline(
    recipe: str, task: str, api_mode: str, transport: str, tmp_path: Path,
    record_property: pytest.RecordProperty,
) -> None:  # fmt: skip
    from omniqual.engine.targets.targets import prepare_model

    row = RowKey((("model", recipe), ("task", task), ("api_mode", api_mode),
                  ("output_transport", transport)))  # fmt: skip
    loaded = load_recipes(ROOT / "runners")[recipe]
    model = prepare_model(loaded.recipe, Provenance(), loaded.path.parent)
    spec = GateSpec.model_validate(load_yaml(ROOT / "gates" / "startup.yaml").data)
    launcher = _Launcher(model.model, loaded.path.parent, tmp_path, 0.0)
    ctx = CheckContext(
        gate=spec, row=row, target=TargetInfo(url=None, recipe=loaded.recipe, label=recipe),
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
    assert launcher.launched == [f"{recipe}-startup"]  # one fresh launch, its own
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
