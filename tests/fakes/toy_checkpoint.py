"""A toy diffusers-layout checkpoint (numpy + safetensors, no torch) with its runtime manifest and
mapping spec, for strict-load tests. The transformer is sharded with an index and fuses q/k/v
into ``to_qkv`` like vLLM-Omni; the text encoder is one unindexed file with an ignored buffer.
Each ``break_*`` helper damages a fresh copy in one precise way."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import yaml
from safetensors.numpy import save_file

INDEX = "diffusion_pytorch_model.safetensors.index.json"
SHARD_1 = "diffusion_pytorch_model-00001-of-00002.safetensors"
SHARD_2 = "diffusion_pytorch_model-00002-of-00002.safetensors"

TRANSFORMER_SHARDS: dict[str, dict[str, tuple[int, ...]]] = {
    SHARD_1: {
        "blocks.0.attn.to_q.weight": (8, 4),
        "blocks.0.attn.to_k.weight": (8, 4),
        "blocks.0.attn.to_v.weight": (8, 4),
        "blocks.0.attn.to_q.bias": (8,),
        "blocks.0.attn.to_k.bias": (8,),
        "blocks.0.attn.to_v.bias": (8,),
    },
    SHARD_2: {
        "blocks.0.ff.net.0.proj.weight": (16, 4),
        "proj_out.weight": (4, 8),
        "proj_out.bias": (4,),
    },
}
TEXT_ENCODER = {"embed.weight": (10, 4), "embed.position_ids": (1, 7)}

RUNTIME = {
    "source": "manifest",
    "pipeline_class": "ToyPipeline",
    "dtype": "bfloat16",
    "components": [
        {
            "name": "transformer", "subfolder": "transformer", "loader": "vllm-omni",
            "class_name": "ToyTransformer",
            "params": [
                {"name": "blocks.0.attn.to_qkv.weight", "shape": [24, 4], "dtype": "bfloat16",
                 "kind": "parameter"},
                {"name": "blocks.0.attn.to_qkv.bias", "shape": [24], "dtype": "bfloat16",
                 "kind": "parameter"},
                {"name": "blocks.0.ff.net_0.proj.weight", "shape": [16, 4], "dtype": "bfloat16",
                 "kind": "parameter"},
                {"name": "proj_out.weight", "shape": [4, 8], "dtype": "bfloat16",
                 "kind": "parameter"},
                {"name": "proj_out.bias", "shape": [4], "dtype": "bfloat16", "kind": "parameter"},
                {"name": "rope.freqs", "shape": [4], "dtype": "float32", "kind": "buffer"},
            ],
        },
        {
            "name": "text_encoder", "subfolder": "text_encoder", "loader": "transformers",
            "class_name": "ToyEncoder",
            "params": [
                {"name": "embed.weight", "shape": [10, 4], "dtype": "bfloat16",
                 "kind": "parameter"},
            ],
        },
    ],
}  # fmt: skip

MAPPING = {
    "schema_version": 1,
    "id": "toy",
    "pipeline_classes": ["ToyPipeline"],
    "components": {
        "transformer": {
            "loader": "vllm-omni",
            "renames": [{"pattern": r"\.ff\.net\.0\.", "replacement": ".ff.net_0."}],
            "fused": [
                {"into": ".to_qkv", "sources": [".to_q", ".to_k", ".to_v"],
                 "shard_ids": ["q", "k", "v"]},
            ],
        },
        "text_encoder": {
            "loader": "transformers",
            "ignores": [
                {"side": "checkpoint", "pattern": r"embed\.position_ids",
                 "reason": "a constant arange the encoder recomputes"},
            ],
        },
    },
}  # fmt: skip


def _arrays(spec: dict[str, tuple[int, ...]]) -> dict[str, np.ndarray]:
    return {name: np.zeros(shape, dtype=np.float32) for name, shape in spec.items()}


def write_index(folder: Path, weight_map: dict[str, str]) -> None:
    doc = {"metadata": {"total_size": 0}, "weight_map": dict(sorted(weight_map.items()))}
    (folder / INDEX).write_text(json.dumps(doc), encoding="utf-8")


def build(root: Path) -> Path:
    """Write the clean toy checkpoint, its manifest and the mapping; return the checkpoint."""
    checkpoint = root / "checkpoint"
    transformer = checkpoint / "transformer"
    transformer.mkdir(parents=True)
    for shard, spec in TRANSFORMER_SHARDS.items():
        save_file(_arrays(spec), str(transformer / shard))
    write_index(
        transformer, {name: shard for shard, spec in TRANSFORMER_SHARDS.items() for name in spec}
    )
    encoder = checkpoint / "text_encoder"
    encoder.mkdir()
    save_file(_arrays(TEXT_ENCODER), str(encoder / "model.safetensors"))
    (checkpoint / "model_index.json").write_text('{"_class_name": "ToyPipeline"}')
    (checkpoint / "runtime-params.json").write_text(json.dumps(RUNTIME), encoding="utf-8")
    mappings = root / "gates" / "load-mappings"
    mappings.mkdir(parents=True)
    write_mapping(root, MAPPING)
    return checkpoint


def write_mapping(root: Path, mapping: dict[str, object]) -> None:
    path = root / "gates" / "load-mappings" / "toy.yaml"
    path.write_text(yaml.safe_dump(mapping, sort_keys=False), encoding="utf-8")


def rewrite_shard(checkpoint: Path, shard: str, spec: dict[str, tuple[int, ...]]) -> None:
    """Replace one transformer shard and keep the index consistent with it."""
    folder = checkpoint / "transformer"
    save_file(_arrays(spec), str(folder / shard))
    index = json.loads((folder / INDEX).read_text())["weight_map"]
    index = {name: file for name, file in index.items() if file != shard}
    index.update({name: shard for name in spec})
    write_index(folder, index)


def truncate(path: Path, keep: int) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:keep])


def header_claiming(path: Path, length: int) -> None:
    """A file whose 8-byte header length promises more bytes than exist."""
    path.write_bytes(struct.pack("<Q", length) + b"{}")
