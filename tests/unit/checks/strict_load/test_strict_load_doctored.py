"""SL-03 through the strict-load gate with a fake launcher: the gate drops one tensor the
runtime retains from a copy of the checkpoint (the original untouched), starts the row's recipe
on the copy, and passes only when that start-up fails with an error naming the weight. A server
that becomes ready fails the gate; a start-up that dies naming nothing fails it; a URL target
has no such case and says why. No process is started."""

from __future__ import annotations

import asyncio
import hashlib
import json
import struct
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from omniqual.checks.base import CheckContext, CheckOutcome, LaunchAttempt, TargetInfo
from omniqual.checks.strict_load import StrictLoadCheck, StrictLoadParams
from omniqual.deploy.launcher import LAUNCH_MARKER, StartupOutcome
from omniqual.domain.axes import RowKey
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.recipe import Expectation, LaunchRecipe, RecipeKind
from tests.fakes import toy_checkpoint as toy
from tests.fakes.memory_sink import MemorySink

PARAMS = StrictLoadParams(runtime="manifest", manifest="runtime-params.json")
RECIPE = LaunchRecipe(id="toy", description="toy", kind=RecipeKind.EMBEDDED, pipeline="toy",
                      flags={"model-class-name": "ToyPipeline"})  # fmt: skip
VICTIM = "blocks.0.ff.net.0.proj.weight"
"""The first retained weight of the vLLM-Omni component loaded from one tensor (to_qkv is fused,
the text encoder is loaded by transformers); the runtime knows it renamed."""
RUNTIME_NAME = "blocks.0.ff.net_0.proj.weight"
REFUSAL = (
    "ValueError: Following weights were not initialized from checkpoint:"
    f" {{'transformer.{RUNTIME_NAME}'}}"
)


class FakeLauncher:
    """Stands in for the engine's launch: records the recipe, inspects the checkpoint it names,
    and answers with the start-up the test chose."""

    def __init__(self, tmp_path: Path, *, ready: bool, log: str, reason: str = "exited") -> None:
        self.tmp_path, self.ready, self.log, self.reason = tmp_path, ready, log, reason
        self.recipes: list[LaunchRecipe] = []
        self.seen: dict[str, object] = {}

    async def __call__(self, recipe: LaunchRecipe) -> LaunchAttempt:
        self.recipes.append(recipe)
        served = Path(recipe.command[2])
        folder = served / "transformer"
        index = json.loads((folder / toy.INDEX).read_text())["weight_map"]
        self.seen = {
            "checkpoint": served,
            "shard_1": sorted(load_file(str(folder / toy.SHARD_1))),
            "shard_2": sorted(load_file(str(folder / toy.SHARD_2))),
            "index": sorted(index),
            "encoder_linked": (served / "text_encoder" / "model.safetensors").is_symlink(),
        }
        log_path = self.tmp_path / "doctored.log"
        log_path.write_text(f"{LAUNCH_MARKER}{recipe.id} at now\nINFO loading\n{self.log}\n")
        startup = StartupOutcome(
            recipe_id=recipe.id, expected=recipe.expect, became_ready=self.ready,
            reason="ready" if self.ready else self.reason,  # type: ignore[arg-type]
            exit_code=None if self.ready or self.reason == "timeout" else 1, elapsed_s=12.5,
            log_path=log_path, log_tail=tuple(self.log.splitlines()), command=recipe.command,
            expected_error_matched=None,
        )  # fmt: skip
        return LaunchAttempt(startup, None)


def run(
    root: Path, checkpoint: Path, launcher: FakeLauncher | None, recipe: LaunchRecipe = RECIPE
) -> tuple[CheckOutcome, MemorySink]:
    sink = MemorySink()
    ctx = CheckContext(
        gate=GateSpec(id="strict-load", kind="strict_load", version=3),
        row=RowKey((("model", "toy"),)),
        target=TargetInfo(url=None, recipe=recipe, checkpoint_dir=checkpoint, label="toy"),
        artifacts=sink, project_root=root,
        make_client=lambda: (_ for _ in ()).throw(AssertionError),  # type: ignore[arg-type,return-value]
        launch_expecting_failure=launcher,
    )  # fmt: skip
    return asyncio.run(StrictLoadCheck().run(ctx, PARAMS)), sink


def doctored_case(outcome: CheckOutcome) -> tuple[GateOutcome, str, str]:
    (found,) = [c for c in outcome.cases if c.id == "doctored-startup"]
    return found.outcome, found.observed_status, found.note


def digest(folder: Path) -> str:
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return hashlib.sha256(b"".join(p.read_bytes() for p in files)).hexdigest()


@pytest.fixture
def checkpoint(tmp_path: Path) -> Path:
    return toy.build(tmp_path)


def test_a_start_up_that_aborts_naming_the_dropped_weight_passes(
    tmp_path: Path, checkpoint: Path
) -> None:
    before = digest(checkpoint)
    launcher = FakeLauncher(tmp_path, ready=False, log=REFUSAL)
    outcome, sink = run(tmp_path, checkpoint, launcher)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    # The copy lacks exactly the victim, in its shard and its index; the rest is linked.
    others = sorted(toy.TRANSFORMER_SHARDS[toy.SHARD_2])
    others.remove(VICTIM)
    assert launcher.seen["shard_2"] == others
    assert launcher.seen["shard_1"] == sorted(toy.TRANSFORMER_SHARDS[toy.SHARD_1])
    assert VICTIM not in launcher.seen["index"]  # type: ignore[operator]
    assert len(launcher.seen["index"]) == 8  # type: ignore[arg-type]
    assert launcher.seen["encoder_linked"] is True
    assert not Path(str(launcher.seen["checkpoint"])).exists(), "the copy is removed after"
    assert digest(checkpoint) == before, "the original checkpoint is never written"
    # The recipe: the row's own launch, pointed at the copy, expected to refuse.
    (launched,) = launcher.recipes
    assert launched.kind is RecipeKind.COMMAND and launched.expect is Expectation.REJECTS
    assert launched.command[:2] == ("{bindir}/vllm", "serve")
    assert launched.flags == RECIPE.flags
    assert launched.env["OMNIQUAL_CPU_PLATFORM"] == "1"
    state, observed, note = doctored_case(outcome)
    assert state is GateOutcome.PASSED
    assert f"transformer.{RUNTIME_NAME}" in note and "exited" in observed
    evidence = json.loads(sink.blobs["doctored-startup.json"])
    assert evidence["dropped"] == {"component": "transformer", "tensor": VICTIM,
                                   "file": toy.SHARD_2, "parameter": RUNTIME_NAME}  # fmt: skip
    time_to_abort = {m.name: m for m in outcome.measurements}["doctored_time_to_abort"]
    assert time_to_abort.value == 12.5 and time_to_abort.unit == "s"


def test_a_server_that_serves_without_the_weight_fails(tmp_path: Path, checkpoint: Path) -> None:
    launcher = FakeLauncher(tmp_path, ready=True, log="INFO Application startup complete.")
    outcome, _ = run(tmp_path, checkpoint, launcher)
    assert outcome.outcome is GateOutcome.FAILED
    (reason,) = [r for r in outcome.reasons if "doctored" in r]
    assert "loaded with a missing tensor" in reason
    assert f"{VICTIM!r}" in reason and "became ready" in reason
    assert doctored_case(outcome)[0] is GateOutcome.FAILED


def test_a_start_up_that_dies_naming_no_weight_fails(tmp_path: Path, checkpoint: Path) -> None:
    launcher = FakeLauncher(tmp_path, ready=False, log="RuntimeError: CUDA driver not found")
    outcome, _ = run(tmp_path, checkpoint, launcher)
    assert outcome.outcome is GateOutcome.FAILED
    (reason,) = [r for r in outcome.reasons if "doctored" in r]
    assert "no error in its log names the missing weight" in reason
    assert "CUDA driver not found" in reason


def test_a_hang_whose_log_names_the_weight_is_a_refusal(tmp_path: Path, checkpoint: Path) -> None:
    launcher = FakeLauncher(tmp_path, ready=False, log=REFUSAL, reason="timeout")
    outcome, _ = run(tmp_path, checkpoint, launcher)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert "timeout" in doctored_case(outcome)[1]


def test_a_url_target_has_no_doctored_start_up_and_says_why(
    tmp_path: Path, checkpoint: Path
) -> None:
    url = LaunchRecipe(id="remote", description="remote", kind=RecipeKind.URL,
                       url="http://gpu-host:8000")  # fmt: skip
    launcher = FakeLauncher(tmp_path, ready=False, log=REFUSAL)
    outcome, _ = run(tmp_path, checkpoint, launcher, recipe=url)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert launcher.recipes == []
    state, _, note = doctored_case(outcome)
    assert state is GateOutcome.SKIPPED
    assert "given by URL" in note


def test_without_a_launcher_the_case_is_absent(tmp_path: Path, checkpoint: Path) -> None:
    outcome, _ = run(tmp_path, checkpoint, None)
    state, _, note = doctored_case(outcome)
    assert state is GateOutcome.SKIPPED and "no launch" in note


def test_dropping_a_tensor_keeps_every_other_tensor_byte_for_byte(tmp_path: Path) -> None:
    from omniqual.checks.strict_load.doctored_copy import without_tensor

    source = tmp_path / "in.safetensors"
    arrays = {"a": np.arange(6, dtype=np.float32).reshape(2, 3),
              "b": np.arange(4, dtype=np.int64), "c": np.ones((3,), dtype=np.float16)}  # fmt: skip
    save_file(arrays, str(source), metadata={"format": "pt"})
    target = tmp_path / "out.safetensors"
    without_tensor(source, target, "b")
    kept = load_file(str(target))
    assert sorted(kept) == ["a", "c"]
    assert all(np.array_equal(kept[k], arrays[k]) for k in kept)
    (length,) = struct.unpack("<Q", target.read_bytes()[:8])
    header = json.loads(target.read_bytes()[8 : 8 + length])
    assert header["__metadata__"] == {"format": "pt"} and length % 8 == 0


def test_a_bf16_tensor_is_kept_without_decoding_it(tmp_path: Path) -> None:
    # bfloat16 has no numpy dtype: the rewrite moves bytes and never decodes a tensor.
    from omniqual.checks.strict_load.doctored_copy import without_tensor

    payload = bytes(range(16))
    header = json.dumps({
        "w": {"dtype": "BF16", "shape": [2, 4], "data_offsets": [0, 16]},
        "x": {"dtype": "BF16", "shape": [2], "data_offsets": [16, 20]},
    })  # fmt: skip
    raw = header.encode() + b" " * (-len(header) % 8)
    source = tmp_path / "bf16.safetensors"
    source.write_bytes(struct.pack("<Q", len(raw)) + raw + payload + b"\x01\x02\x03\x04")
    target = tmp_path / "out.safetensors"
    without_tensor(source, target, "x")
    data = target.read_bytes()
    (length,) = struct.unpack("<Q", data[:8])
    assert json.loads(data[8 : 8 + length]) == {
        "w": {"dtype": "BF16", "shape": [2, 4], "data_offsets": [0, 16]}
    }
    assert data[8 + length :] == payload
