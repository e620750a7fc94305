"""The bundled LoRA adapters: PEFT directories vLLM-Omni 0.30 loads (config and tensor names,
[r, in] and [out, r] shapes from the checkpoint's own transformer config), two that differ in
seed and targets, written once and reused, and none for a transformer they are not made for;
beside them one that matches no layer and one whose weights are not safetensors."""

import json
from pathlib import Path

import pytest
from safetensors import SafetensorError
from safetensors.numpy import load_file

from omniqual.deploy.embedded.adapters import RANK, bundled_adapters, bundled_broken_adapters

SD3 = {"_class_name": "SD3Transformer2DModel", "num_attention_heads": 4,
       "attention_head_dim": 8, "num_layers": 2}  # fmt: skip


def _checkpoint(tmp_path: Path, config: dict[str, object]) -> Path:
    checkpoint = tmp_path / "sd3-tiny-0123"
    (checkpoint / "transformer").mkdir(parents=True)
    (checkpoint / "transformer" / "config.json").write_text(json.dumps(config))
    return checkpoint


def test_two_peft_adapters_with_the_transformers_dimensions(tmp_path: Path) -> None:
    a, b = bundled_adapters(_checkpoint(tmp_path, SD3))
    assert (a.name, b.name) == ("omniqual-a", "omniqual-b")
    assert a.path.parent == tmp_path / "sd3-tiny-0123-lora-v2"
    config = json.loads((a.path / "adapter_config.json").read_text())
    assert config["r"] == RANK and config["lora_alpha"] == RANK
    assert config["target_modules"] == ["to_q", "to_k", "to_v", "to_out.0", "ff.net.0.proj",
                                        "ff.net.2"]  # fmt: skip
    tensors = load_file(str(a.path / "adapter_model.safetensors"))
    assert len(tensors) == 2 * 2 * 6  # A and B, two blocks, six modules
    block = "base_model.model.transformer_blocks.1"
    assert tensors[f"{block}.attn.to_q.lora_A.weight"].shape == (RANK, 32)
    assert tensors[f"{block}.ff.net.0.proj.lora_B.weight"].shape == (128, RANK)
    assert tensors[f"{block}.ff.net.2.lora_A.weight"].shape == (RANK, 128)
    only_b = load_file(str(b.path / "adapter_model.safetensors"))
    assert len(only_b) == 2 * 2 * 4 and not any(".ff." in key for key in only_b)
    # Other seeds: the shared modules carry other weights.
    key = f"{block}.attn.to_q.lora_B.weight"
    assert (tensors[key] != only_b[key]).any()


def test_written_once_then_reused_byte_for_byte(tmp_path: Path) -> None:
    checkpoint = _checkpoint(tmp_path, SD3)
    (a, _) = bundled_adapters(checkpoint)
    first = (a.path / "adapter_model.safetensors").read_bytes()
    stamp = (a.path / "adapter_model.safetensors").stat().st_mtime_ns
    (again, _) = bundled_adapters(checkpoint)
    assert (again.path / "adapter_model.safetensors").stat().st_mtime_ns == stamp
    assert (again.path / "adapter_model.safetensors").read_bytes() == first
    # Written from the config alone: another directory gets the same bytes.
    (other, _) = bundled_adapters(_checkpoint(tmp_path / "elsewhere", SD3))
    assert (other.path / "adapter_model.safetensors").read_bytes() == first


def test_the_broken_ones_match_no_layer_and_do_not_load(tmp_path: Path) -> None:
    checkpoint = _checkpoint(tmp_path, SD3)
    broken = bundled_broken_adapters(checkpoint)
    beside = tmp_path / "sd3-tiny-0123-lora-v2"
    assert {case: a.path.parent for case, a in broken.items()} == {"no-layer": beside,
                                                                  "malformed": beside}
    no_layer = broken["no-layer"].path
    (target,) = json.loads((no_layer / "adapter_config.json").read_text())["target_modules"]
    good = {m for a in bundled_adapters(checkpoint)
            for m in json.loads((a.path / "adapter_config.json").read_text())["target_modules"]}
    assert target not in good and "to_" not in target  # no SD3 module has this name
    assert all(target in key for key in load_file(str(no_layer / "adapter_model.safetensors")))
    malformed = broken["malformed"].path
    assert json.loads((malformed / "adapter_config.json").read_text())["target_modules"] == ["to_q"]
    with pytest.raises(SafetensorError):
        load_file(str(malformed / "adapter_model.safetensors"))


def test_no_adapters_for_another_transformer_or_none(tmp_path: Path) -> None:
    assert bundled_adapters(_checkpoint(tmp_path, {"_class_name": "WanTransformer3DModel"})) == ()
    assert bundled_adapters(tmp_path / "missing") == ()
    assert bundled_broken_adapters(tmp_path / "missing") == {}
