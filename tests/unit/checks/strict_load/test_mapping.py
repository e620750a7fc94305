"""The mapping engine alone: renames, fused shards, reshapes, ignores and the four sets."""

from omniqual.checks.strict_load.mapping import map_component
from omniqual.deploy.checkpoint_index import ComponentInventory, TensorHeader
from omniqual.deploy.runtime_params import RuntimeComponent, RuntimeParam
from omniqual.domain.load_mapping import ComponentMapping


def inventory(**tensors: tuple[str, tuple[int, ...]]) -> ComponentInventory:
    headers = tuple(
        TensorHeader(name=name.replace("__", "."), dtype=dtype, shape=shape, file="m.safetensors")
        for name, (dtype, shape) in tensors.items()
    )
    return ComponentInventory(component="c", index_file=None, files=("m.safetensors",),
                              tensors=headers, problems=())  # fmt: skip


def runtime(*params: RuntimeParam) -> RuntimeComponent:
    return RuntimeComponent(name="c", subfolder="c", loader="vllm-omni", class_name="C",
                            params=params)  # fmt: skip


def param(name: str, *shape: int, kind: str = "parameter", optional: bool = False) -> RuntimeParam:
    return RuntimeParam(name=name, shape=shape, dtype="bfloat16", kind=kind,  # type: ignore[arg-type]
                        optional=optional)  # fmt: skip


def test_gate_up_fusion_by_integer_shard_ids() -> None:
    mapping = ComponentMapping.model_validate({
        "loader": "vllm-omni",
        "fused": [{"into": ".gate_up_proj", "sources": [".gate_proj", ".up_proj"],
                   "shard_ids": [0, 1]}],
    })  # fmt: skip
    inv = inventory(mlp__gate_proj__weight=("BF16", (6, 4)), mlp__up_proj__weight=("BF16", (6, 4)))
    result = map_component(inv, runtime(param("mlp.gate_up_proj.weight", 12, 4)), mapping)
    assert result.findings == ()
    assert result.loaded[0].sources == ("mlp.gate_proj.weight", "mlp.up_proj.weight")

    missing_up = inventory(mlp__gate_proj__weight=("BF16", (6, 4)))
    result = map_component(missing_up, runtime(param("mlp.gate_up_proj.weight", 12, 4)), mapping)
    assert result.findings == (
        "c: fused 'mlp.gate_up_proj.weight' is incomplete: missing shard 1"
        " ('mlp.up_proj.weight'); present 'mlp.gate_proj.weight'",
    )


def test_renames_apply_in_order_before_lookup() -> None:
    mapping = ComponentMapping.model_validate({
        "loader": "vllm-omni",
        "renames": [{"pattern": "^scale_shift_table$", "replacement": "out.scale_shift_table"},
                    {"pattern": r"\.to_out\.0\.", "replacement": ".to_out."}],
    })  # fmt: skip
    inv = inventory(scale_shift_table=("F32", (2, 4)), a__to_out__0__weight=("F32", (4, 4)))
    rt = runtime(param("out.scale_shift_table", 2, 4), param("a.to_out.weight", 4, 4))
    result = map_component(inv, rt, mapping)
    assert result.findings == () and result.expected == 2 and len(result.loaded) == 2


def test_reshape_rule_allows_unsqueezed_parameter() -> None:
    plain = ComponentMapping(loader="vllm-omni")
    inv, rt = inventory(time_proj__weight=("F32", (4,))), runtime(param("time_proj.weight", 4, 1))
    assert "expects [4, 1]" in map_component(inv, rt, plain).findings[0]
    reshaped = ComponentMapping.model_validate({
        "loader": "vllm-omni",
        "reshapes": [{"pattern": r"time_proj\.weight", "op": "unsqueeze-last"}],
    })  # fmt: skip
    assert map_component(inv, rt, reshaped).findings == ()


def test_two_sources_for_one_destination_are_reported() -> None:
    mapping = ComponentMapping.model_validate({
        "loader": "vllm-omni", "renames": [{"pattern": r"^old\.", "replacement": "new."}],
    })  # fmt: skip
    inv = inventory(new__w=("F32", (2,)), old__w=("F32", (2,)))
    result = map_component(inv, runtime(param("new.w", 2)), mapping)
    assert result.findings == ("c: 'new.w', 'old.w' all load into 'new.w'; one would silently win",)


def test_buffers_and_optional_parameters_are_not_required() -> None:
    rt = runtime(param("w", 2), param("pos", 8, kind="buffer"), param("lora", 2, optional=True))
    result = map_component(inventory(w=("F32", (2,))), rt, ComponentMapping(loader="x"))
    assert result.findings == () and result.expected == 1


def test_runtime_ignore_with_reason_waives_a_missing_parameter() -> None:
    mapping = ComponentMapping.model_validate({
        "loader": "x",
        "ignores": [{"side": "runtime", "pattern": r"freqs\..*", "reason": "computed at init"},
                    {"side": "checkpoint", "pattern": "never", "reason": "stale"}],
    })  # fmt: skip
    result = map_component(inventory(), runtime(param("freqs.cos", 4)), mapping)
    assert result.findings == ()
    assert result.ignored[0].name == "freqs.cos" and result.ignored[0].side == "runtime"
    assert result.notes == ("c: checkpoint ignore 'never' matched nothing",)


def test_fp8_checkpoint_tensor_is_not_accepted_for_a_bf16_parameter() -> None:
    result = map_component(inventory(w=("F8_E4M3", (2,))), runtime(param("w", 2)),
                           ComponentMapping(loader="x"))  # fmt: skip
    assert result.findings == (
        "c: dtype of 'w' is F8_E4M3; runtime 'w' is bfloat16 and the mapping accepts F32/BF16/F16"
        " for it",
    )
