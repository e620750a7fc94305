"""The strict-load gate end to end on a toy checkpoint (runtime list from a manifest, no torch):
each fault it targets FAILS with a reason naming the tensor or file; the clean one passes."""

import asyncio
import copy
import json
from pathlib import Path

import pytest

from omniqual.checks.base import CheckContext, CheckOutcome, TargetInfo
from omniqual.checks.strict_load import StrictLoadCheck, StrictLoadParams
from omniqual.domain.axes import RowKey
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from tests.fakes import toy_checkpoint as toy
from tests.fakes.memory_sink import MemorySink

PARAMS = StrictLoadParams(runtime="manifest", manifest="runtime-params.json")


def run(root: Path, checkpoint: Path | None, params: StrictLoadParams = PARAMS) -> tuple[
    CheckOutcome, MemorySink
]:  # fmt: skip
    sink = MemorySink()

    def no_client() -> object:
        raise AssertionError("strict-load must not talk to a server")

    ctx = CheckContext(
        gate=GateSpec(id="strict-load", kind="strict_load", version=1),
        row=RowKey((("model", "toy"),)),
        target=TargetInfo(url=None, checkpoint_dir=checkpoint, label="toy"),
        artifacts=sink,
        project_root=root,
        make_client=no_client,  # type: ignore[arg-type]
    )
    return asyncio.run(StrictLoadCheck().run(ctx, params)), sink


@pytest.fixture
def checkpoint(tmp_path: Path) -> Path:
    return toy.build(tmp_path)


def failed_with(outcome: CheckOutcome, *fragments: str) -> None:
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    for fragment in fragments:
        assert any(fragment in reason for reason in outcome.reasons), (fragment, outcome.reasons)


def test_clean_checkpoint_passes_with_three_artifacts(tmp_path: Path, checkpoint: Path) -> None:
    outcome, sink = run(tmp_path, checkpoint)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert {a.role for a in outcome.artifacts} == {
        "header-inventory", "runtime-params", "mapping-result",
    }  # fmt: skip
    result = json.loads(sink.blobs["mapping-result.json"])
    transformer = next(c for c in result["components"] if c["component"] == "transformer")
    qkv = next(e for e in transformer["loaded"] if e["destination"].endswith("to_qkv.weight"))
    assert len(qkv["sources"]) == 3
    encoder = next(c for c in result["components"] if c["component"] == "text_encoder")
    assert encoder["ignored"][0]["name"] == "embed.position_ids"
    by_name = {m.name: m.value for m in outcome.measurements}
    assert by_name["checkpoint_tensors"] == 11
    assert by_name["expected_params"] == 6 and by_name["findings"] == 0
    assert outcome.effective["runtime_source"] == "manifest"


def test_missing_k_shard_of_fused_qkv_fails(tmp_path: Path, checkpoint: Path) -> None:
    shard = dict(toy.TRANSFORMER_SHARDS[toy.SHARD_1])
    del shard["blocks.0.attn.to_k.weight"]
    toy.rewrite_shard(checkpoint, toy.SHARD_1, shard)
    outcome, _ = run(tmp_path, checkpoint)
    failed_with(outcome, "fused 'blocks.0.attn.to_qkv.weight' is incomplete",
                "shard 'k' ('blocks.0.attn.to_k.weight')")  # fmt: skip


def test_extra_tensor_is_unexpected(tmp_path: Path, checkpoint: Path) -> None:
    shard = {**toy.TRANSFORMER_SHARDS[toy.SHARD_2], "blocks.0.attn.lora_a.weight": (2, 4)}
    toy.rewrite_shard(checkpoint, toy.SHARD_2, shard)
    outcome, _ = run(tmp_path, checkpoint)
    failed_with(outcome, "unexpected checkpoint tensor 'blocks.0.attn.lora_a.weight'")


def test_wrong_shape_fails_naming_both_shapes(tmp_path: Path, checkpoint: Path) -> None:
    shard = {**toy.TRANSFORMER_SHARDS[toy.SHARD_2], "proj_out.weight": (4, 5)}
    toy.rewrite_shard(checkpoint, toy.SHARD_2, shard)
    outcome, _ = run(tmp_path, checkpoint)
    failed_with(outcome, "shape of 'proj_out.weight' is [4, 5], runtime 'proj_out.weight'"
                " expects [4, 8]")  # fmt: skip


def test_fused_shard_with_wrong_rows_fails_on_concatenated_shape(
    tmp_path: Path, checkpoint: Path
) -> None:
    shard = {**toy.TRANSFORMER_SHARDS[toy.SHARD_1], "blocks.0.attn.to_v.weight": (6, 4)}
    toy.rewrite_shard(checkpoint, toy.SHARD_1, shard)
    outcome, _ = run(tmp_path, checkpoint)
    failed_with(outcome, "shape of fused 'blocks.0.attn.to_qkv.weight'",
                "concatenate to [22, 4], runtime expects [24, 4]")  # fmt: skip


def test_truncated_header_fails_naming_the_file(tmp_path: Path, checkpoint: Path) -> None:
    toy.truncate(checkpoint / "text_encoder" / "model.safetensors", 40)
    outcome, _ = run(tmp_path, checkpoint)
    failed_with(outcome, "corrupt safetensors header: model.safetensors", "truncated")
    # Its tensors are unreadable, so the encoder's parameter has no source either.
    failed_with(outcome, "missing runtime parameter 'embed.weight'")


def test_header_shorter_than_length_field_fails(tmp_path: Path, checkpoint: Path) -> None:
    toy.truncate(checkpoint / "transformer" / toy.SHARD_2, 5)
    outcome, _ = run(tmp_path, checkpoint)
    failed_with(outcome, f"{toy.SHARD_2}: 5 bytes, shorter than the 8-byte header length")


def test_index_naming_a_missing_file_fails(tmp_path: Path, checkpoint: Path) -> None:
    (checkpoint / "transformer" / toy.SHARD_2).unlink()
    outcome, _ = run(tmp_path, checkpoint)
    failed_with(outcome, f"names {toy.SHARD_2}, which does not exist",
                "missing runtime parameter 'proj_out.weight'")  # fmt: skip


def test_ignore_without_reason_fails(tmp_path: Path, checkpoint: Path) -> None:
    mapping = copy.deepcopy(toy.MAPPING)
    mapping["components"]["text_encoder"]["ignores"][0]["reason"] = None  # type: ignore[index]
    toy.write_mapping(tmp_path, mapping)
    outcome, _ = run(tmp_path, checkpoint)
    failed_with(outcome, "checkpoint ignore 'embed\\\\.position_ids' has no reason")


def test_unmapped_checkpoint_component_is_unexpected(tmp_path: Path, checkpoint: Path) -> None:
    (checkpoint / "safety_checker").mkdir()
    toy.save_file({"w": toy.np.zeros((2,), dtype=toy.np.float32)},
                  str(checkpoint / "safety_checker" / "model.safetensors"))  # fmt: skip
    outcome, _ = run(tmp_path, checkpoint)
    failed_with(outcome, "unexpected checkpoint component safety_checker/ (1 tensors)")


def test_integer_tensor_for_float_parameter_fails_on_dtype(
    tmp_path: Path, checkpoint: Path
) -> None:
    folder = checkpoint / "text_encoder"
    toy.save_file({"embed.weight": toy.np.zeros((10, 4), dtype=toy.np.int64)},
                  str(folder / "model.safetensors"))  # fmt: skip
    outcome, _ = run(tmp_path, checkpoint)
    failed_with(outcome, "dtype of 'embed.weight' is I64; runtime 'embed.weight' is bfloat16")


def test_no_checkpoint_dir_is_invalid(tmp_path: Path) -> None:
    outcome, _ = run(tmp_path, None)
    assert outcome.outcome is GateOutcome.INVALID
    assert "needs a checkpoint directory" in outcome.reasons[0]


def test_pipeline_without_mapping_is_invalid(tmp_path: Path, checkpoint: Path) -> None:
    manifest = json.loads((checkpoint / "runtime-params.json").read_text())
    manifest["pipeline_class"] = "OtherPipeline"
    (checkpoint / "runtime-params.json").write_text(json.dumps(manifest))
    outcome, _ = run(tmp_path, checkpoint)
    assert outcome.outcome is GateOutcome.INVALID
    assert "no mapping in gates/load-mappings lists pipeline OtherPipeline" in outcome.reasons[0]


def test_many_findings_are_capped_with_a_pointer(tmp_path: Path, checkpoint: Path) -> None:
    shard = {f"stray.{i}.weight": (2,) for i in range(5)}
    toy.rewrite_shard(checkpoint, toy.SHARD_2, {**toy.TRANSFORMER_SHARDS[toy.SHARD_2], **shard})
    params = PARAMS.model_copy(update={"max_reasons": 2})
    outcome, _ = run(tmp_path, checkpoint, params)
    assert outcome.outcome is GateOutcome.FAILED
    assert len(outcome.reasons) == 3
    assert outcome.reasons[-1] == "... and 3 more (see mapping-result)"


def empty_runtime(checkpoint: Path, components: list[dict[str, object]]) -> None:
    manifest = json.loads((checkpoint / "runtime-params.json").read_text())
    manifest["components"] = components
    (checkpoint / "runtime-params.json").write_text(json.dumps(manifest))


def test_empty_runtime_parameter_list_fails(tmp_path: Path, checkpoint: Path) -> None:
    # Every checkpoint folder skipped with a reason and a runtime list with nothing in it: no
    # tensor was held to anything, so nothing was proven (this used to pass with 0 findings).
    mapping = copy.deepcopy(toy.MAPPING)
    mapping["skip_components"] = {
        "transformer": {"reason": "checked elsewhere"}, "text_encoder": {"reason": "frozen"},
    }  # fmt: skip
    toy.write_mapping(tmp_path, mapping)
    empty_runtime(checkpoint, [])
    outcome, _ = run(tmp_path, checkpoint)
    failed_with(outcome, "the runtime parameter list of ToyPipeline is empty (source manifest, 0")
    assert {m.name: m.value for m in outcome.measurements}["expected_params"] == 0


def test_runtime_components_without_any_parameter_fail(tmp_path: Path, checkpoint: Path) -> None:
    (checkpoint / "transformer").rename(tmp_path / "moved-transformer")
    (checkpoint / "text_encoder").rename(tmp_path / "moved-text-encoder")
    empty_runtime(checkpoint, [
        {"name": "transformer", "subfolder": "transformer", "loader": "vllm-omni",
         "class_name": "ToyTransformer", "params": []},
    ])  # fmt: skip
    outcome, _ = run(tmp_path, checkpoint)
    failed_with(outcome, "the runtime parameter list of ToyPipeline is empty")
