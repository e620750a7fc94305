"""Safetensors headers and index files are read and validated without touching tensor data."""

import json
import struct
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from omniqual.deploy.checkpoint_index import (
    CorruptHeader,
    inventory_checkpoint,
    inventory_component,
    read_header,
)
from tests.fakes import toy_checkpoint as toy


def test_header_lists_dtype_and_shape(tmp_path: Path) -> None:
    path = tmp_path / "a.safetensors"
    save_file({"x": np.zeros((3, 2), dtype=np.float16), "y": np.zeros((4,), dtype=np.int64)},
              str(path))  # fmt: skip
    tensors = {t.name: t for t in read_header(path)}
    assert (tensors["x"].dtype, tensors["x"].shape) == ("F16", (3, 2))
    assert (tensors["y"].dtype, tensors["y"].shape, tensors["y"].file) == ("I64", (4,), path.name)


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b"\x01\x00", "shorter than the 8-byte header length"),
        (struct.pack("<Q", 10_000) + b"{}", "header claims 10000 bytes"),
        (struct.pack("<Q", 3) + b"{x}", "not valid JSON"),
        (struct.pack("<Q", 2) + b"[]", "not a JSON object"),
    ],
)
def test_corrupt_headers_are_named(tmp_path: Path, payload: bytes, message: str) -> None:
    path = tmp_path / "bad.safetensors"
    path.write_bytes(payload)
    with pytest.raises(CorruptHeader, match=message):
        read_header(path)


def test_offsets_outside_data_are_truncation(tmp_path: Path) -> None:
    header = json.dumps({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}).encode()
    path = tmp_path / "short.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + b"\x00" * 8)
    with pytest.raises(CorruptHeader, match=r"'w' data_offsets \[0, 16\] fall outside the 8-byte"):
        read_header(path)


def test_byte_span_must_match_dtype_and_shape(tmp_path: Path) -> None:
    header = json.dumps({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 16]}}).encode()
    path = tmp_path / "span.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + b"\x00" * 16)
    with pytest.raises(CorruptHeader, match=r"spans 16 bytes, but F32 \(3,\) needs 12"):
        read_header(path)


def test_clean_toy_checkpoint_has_two_components_without_problems(tmp_path: Path) -> None:
    inventory = inventory_checkpoint(toy.build(tmp_path))
    assert [c.component for c in inventory.components] == ["text_encoder", "transformer"]
    transformer = inventory.component("transformer")
    assert transformer is not None and transformer.index_file == toy.INDEX
    assert transformer.problems == () and len(transformer.tensors) == 9


def test_tensor_in_two_shards_is_reported(tmp_path: Path) -> None:
    folder = toy.build(tmp_path) / "transformer"
    save_file({"proj_out.bias": np.zeros((4,), dtype=np.float32),
               **{n: np.zeros(s, dtype=np.float32)
                  for n, s in toy.TRANSFORMER_SHARDS[toy.SHARD_1].items()}},
              str(folder / toy.SHARD_1))  # fmt: skip
    problems = inventory_component(folder, "transformer").problems
    assert any(f"'proj_out.bias' is in both {toy.SHARD_1} and {toy.SHARD_2}" in p for p in problems)


def test_index_and_shards_must_agree(tmp_path: Path) -> None:
    folder = toy.build(tmp_path) / "transformer"
    index = json.loads((folder / toy.INDEX).read_text())["weight_map"]
    index["ghost.weight"] = toy.SHARD_1
    index["proj_out.bias"] = toy.SHARD_1
    del index["proj_out.weight"]
    toy.write_index(folder, index)
    problems = inventory_component(folder, "transformer").problems
    assert any(f"lists 'ghost.weight' in {toy.SHARD_1}, which lacks it" in p for p in problems)
    assert any(f"places 'proj_out.bias' in {toy.SHARD_1}, but it is in {toy.SHARD_2}" in p
               for p in problems)  # fmt: skip
    assert any(f"'proj_out.weight' in {toy.SHARD_2} is not in {toy.INDEX}" in p for p in problems)


def test_shard_not_named_by_index_is_reported(tmp_path: Path) -> None:
    folder = toy.build(tmp_path) / "transformer"
    save_file({"z": np.zeros((1,), dtype=np.float32)}, str(folder / "stale.safetensors"))
    problems = inventory_component(folder, "transformer").problems
    assert any("shard files not named by" in p and "stale.safetensors" in p for p in problems)


def test_index_without_weight_map_is_reported(tmp_path: Path) -> None:
    folder = toy.build(tmp_path) / "transformer"
    (folder / toy.INDEX).write_text(json.dumps({"metadata": {}}))
    problems = inventory_component(folder, "transformer").problems
    assert any("has no non-empty `weight_map`" in p for p in problems)


def test_incomplete_unindexed_shard_family_is_reported(tmp_path: Path) -> None:
    folder = toy.build(tmp_path) / "transformer"
    (folder / toy.INDEX).unlink()
    (folder / toy.SHARD_2).unlink()
    problems = inventory_component(folder, "transformer").problems
    family = "'diffusion_pytorch_model'"
    assert problems == (f"transformer: unindexed shard family {family} is incomplete",)
