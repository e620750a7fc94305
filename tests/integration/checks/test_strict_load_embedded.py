"""strict-load for real: every bundled tiny checkpoint against vLLM-Omni's own pipeline built on
the meta device (a subprocess of this interpreter), with the model's own source files scanned for
`.data.copy_` on its load paths; a doctored copy of the sharded SD3 transformer missing its `to_k`
shard, copied from the session's shared checkpoint cache (the cache itself is never altered);
and the SD3 recipe really started (`vllm serve --omni`) on the gate's own doctored copy without a
retained weight, which must abort naming it. Set OMNIQUAL_EMBEDDED_CACHE to reuse checkpoints."""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
import yaml

from omniqual.checks.base import CheckContext, CheckOutcome, LaunchAttempt, TargetInfo
from omniqual.checks.strict_load import StrictLoadCheck, StrictLoadParams
from omniqual.deploy.checkpoint_index import inventory_checkpoint
from omniqual.deploy.launcher import probe_startup
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
def cache(checkpoint_cache: Path) -> Path:
    """The session's one checkpoint cache (tests/integration/conftest.py)."""
    return checkpoint_cache


def recipe_for(pipeline: str) -> LaunchRecipe:
    path = ROOT / "runners" / "embedded" / f"{pipeline}.yaml"
    if path.is_file():
        return LaunchRecipe.model_validate(yaml.safe_load(path.read_text()))
    return LaunchRecipe(id=pipeline, description="bundled", kind="embedded", pipeline=pipeline)  # type: ignore[arg-type]


Launch = Callable[[LaunchRecipe], Awaitable[LaunchAttempt]]


def run(
    checkpoint: Path, recipe: LaunchRecipe, launch: Launch | None = None
) -> tuple[CheckOutcome, MemorySink]:
    sink = MemorySink()
    ctx = CheckContext(
        gate=GateSpec(id="strict-load", kind="strict_load", version=3),
        row=RowKey((("model", recipe.pipeline or ""),)),
        target=TargetInfo(url=None, recipe=recipe, checkpoint_dir=checkpoint, label=recipe.id),
        artifacts=sink, project_root=ROOT,
        make_client=lambda: (_ for _ in ()).throw(AssertionError),  # type: ignore[arg-type,return-value]
        launch_expecting_failure=launch,
    )  # fmt: skip
    return asyncio.run(StrictLoadCheck().run(ctx, StrictLoadParams())), sink


def case(outcome: CheckOutcome, case_id: str) -> tuple[GateOutcome, str]:
    (found,) = [c for c in outcome.cases if c.id == case_id]
    return found.outcome, found.note


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
    # SL-06 over the model's own files as the serving environment resolved them.
    assert case(outcome, "load-weights-scan")[0] is GateOutcome.PASSED
    scan = json.loads(sink.blobs["load-weights-scan.json"])
    assert any(f.startswith("vllm_omni/diffusion/models/") for f in scan["files"]), scan
    assert any(any(fn.endswith("load_weights") for fn in fns)
               for fns in scan["load_paths"].values()), scan["load_paths"]  # fmt: skip
    # No launcher here: the doctored start-up is absent, and says so.
    assert case(outcome, "doctored-startup")[0] is GateOutcome.SKIPPED


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


def test_sd3_started_without_a_retained_weight_aborts_naming_it(
    cache: Path, tmp_path: Path
) -> None:
    """SL-03 live: the gate drops one weight the runtime retains from its own copy of the
    checkpoint and starts the SD3 recipe on it; vLLM-Omni 0.30 must refuse to start."""
    from omniqual.deploy.embedded.catalog import build_checkpoint

    checkpoint = Path(build_checkpoint("sd3-tiny", cache).path)
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest()
              for p in sorted((checkpoint / "transformer").iterdir())}  # fmt: skip
    launched: list[LaunchRecipe] = []

    async def attempt(recipe: LaunchRecipe) -> LaunchAttempt:
        launched.append(recipe)
        startup = await asyncio.to_thread(
            probe_startup, recipe, log_path=tmp_path / "doctored.log",
            state_dir=tmp_path / "state", recipe_dir=ROOT / "runners" / "embedded",
        )  # fmt: skip
        return LaunchAttempt(startup, None)

    outcome, sink = run(checkpoint, recipe_for("sd3-tiny"), attempt)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    state, note = case(outcome, "doctored-startup")
    assert state is GateOutcome.PASSED, note
    evidence = json.loads(sink.blobs["doctored-startup.json"])
    dropped = evidence["dropped"]
    # A weight the runtime really retains, really present in the original checkpoint.
    runtime = json.loads(sink.blobs["runtime-params.json"])
    transformer = next(c for c in runtime["components"] if c["name"] == "transformer")
    assert dropped["component"] == "transformer" and transformer["loader"] == "vllm-omni"
    assert dropped["parameter"] in {p["name"] for p in transformer["params"]
                                    if p["kind"] == "parameter"}  # fmt: skip
    tensors = {t.name for c in inventory_checkpoint(checkpoint).components for t in c.tensors}
    assert dropped["tensor"] in tensors
    # The server refused: it exited without becoming ready, naming the weight.
    assert evidence["became_ready"] is False and evidence["reason"] == "exited"
    assert evidence["exit_code"] not in (None, 0)
    assert f"transformer.{dropped['parameter']}" in evidence["named_by"]
    log = (tmp_path / "doctored.log").read_text(errors="replace")
    assert "not initialized from checkpoint" in log
    (recipe,) = launched
    assert "{model}" not in " ".join(recipe.command) and recipe.command[1] == "serve"
    assert not Path(recipe.command[2]).exists(), "the doctored copy is removed afterwards"
    after = {p: hashlib.sha256(p.read_bytes()).hexdigest()
             for p in sorted((checkpoint / "transformer").iterdir())}  # fmt: skip
    assert after == before, "the cached checkpoint is never written"
