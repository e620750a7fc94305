"""strict-load for real: every bundled tiny checkpoint against vLLM-Omni's own pipeline built on
the meta device (a subprocess of this interpreter), plus a doctored copy of the sharded SD3
transformer missing its `to_k` shard. Set OMNIQUAL_EMBEDDED_CACHE to reuse checkpoints."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from omniqual.checks.base import CheckContext, CheckOutcome, TargetInfo
from omniqual.checks.strict_load import StrictLoadCheck, StrictLoadParams
from omniqual.domain.axes import RowKey
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.recipe import LaunchRecipe
from tests.fakes.memory_sink import MemorySink
from tests.integration.embedded.embedded_server import EMBEDDED_MARKS

ROOT = Path(__file__).resolve().parents[3]
pytestmark = EMBEDDED_MARKS

PIPELINES = [
    "sd3-tiny", "qwen-image-tiny", "qwen-image-edit-tiny", "wan-t2v-tiny", "wan-i2v-tiny",
    "stable-audio-tiny",
]  # fmt: skip


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    configured = os.environ.get("OMNIQUAL_EMBEDDED_CACHE")
    return Path(configured) if configured else tmp_path_factory.mktemp("checkpoints")


def recipe_for(pipeline: str) -> LaunchRecipe:
    path = ROOT / "runners" / "embedded" / f"{pipeline}.yaml"
    if path.is_file():
        return LaunchRecipe.model_validate(yaml.safe_load(path.read_text()))
    return LaunchRecipe(id=pipeline, description="bundled", kind="embedded", pipeline=pipeline)  # type: ignore[arg-type]


def run(checkpoint: Path, recipe: LaunchRecipe) -> tuple[CheckOutcome, MemorySink]:
    sink = MemorySink()
    ctx = CheckContext(
        gate=GateSpec(id="strict-load", kind="strict_load", version=1),
        row=RowKey((("model", recipe.pipeline or ""),)),
        target=TargetInfo(url=None, recipe=recipe, checkpoint_dir=checkpoint, label=recipe.id),
        artifacts=sink, project_root=ROOT,
        make_client=lambda: (_ for _ in ()).throw(AssertionError),  # type: ignore[arg-type,return-value]
    )  # fmt: skip
    return asyncio.run(StrictLoadCheck().run(ctx, StrictLoadParams())), sink


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_bundled_checkpoint_loads_strictly(pipeline: str, cache: Path) -> None:
    from omniqual.deploy.embedded.catalog import build_checkpoint

    built = build_checkpoint(pipeline, cache)
    outcome, sink = run(Path(built.path), recipe_for(pipeline))
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert outcome.effective["runtime_source"] == "meta-instantiation"
    runtime = json.loads(sink.blobs["runtime-params.json"])
    loaders = {c["name"]: c["loader"] for c in runtime["components"]}
    assert loaders["transformer"] == "vllm-omni"
    measures = {m.name: m.value for m in outcome.measurements}
    assert measures["loaded_params"] >= measures["expected_params"] > 0


def test_sd3_without_a_k_shard_fails_naming_it(cache: Path, tmp_path: Path) -> None:
    from safetensors.numpy import load_file, save_file

    from omniqual.deploy.embedded.catalog import build_checkpoint

    doctored = tmp_path / "sd3"
    shutil.copytree(build_checkpoint("sd3-tiny", cache).path, doctored)
    folder = doctored / "transformer"
    index_path = next(folder.glob("*.safetensors.index.json"))
    index = json.loads(index_path.read_text())
    victim = "transformer_blocks.0.attn.to_k.weight"
    shard = folder / index["weight_map"].pop(victim)
    tensors = load_file(str(shard))
    del tensors[victim]
    save_file(tensors, str(shard))
    index_path.write_text(json.dumps(index))
    outcome, _ = run(doctored, recipe_for("sd3-tiny"))
    assert outcome.outcome is GateOutcome.FAILED
    assert outcome.reasons == (
        "transformer: fused 'transformer_blocks.0.attn.to_qkv.weight' is incomplete: missing"
        f" shard 'k' ({victim!r}); present 'transformer_blocks.0.attn.to_q.weight',"
        " 'transformer_blocks.0.attn.to_v.weight'",
    )
