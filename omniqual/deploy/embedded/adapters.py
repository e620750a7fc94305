"""Tiny per-request LoRA adapters for a bundled checkpoint, made locally like the checkpoints.

vLLM-Omni 0.30 takes a LoRA adapter per request (``lora: {name, path, scale}``) as a PEFT
directory: ``adapter_config.json`` (``r``, ``lora_alpha``, ``target_modules``) and
``adapter_model.safetensors`` with ``base_model.model.<module>.lora_A.weight`` ([r, in]) and
``.lora_B.weight`` ([out, r]). For an SD3 transformer (``SD3Transformer2DModel``) two adapters
are written, with other seeds and other targets, so that each moves the output somewhere else:
``omniqual-a`` on every block's attention projections and feed-forward, ``omniqual-b`` on the
attention projections only. The module dimensions come from the checkpoint's own
``transformer/config.json``. LoRA's B is usually zero at the start of training; here both
matrices are random, so an applied adapter shows in the output.

The adapters are a pure function of that config and :data:`ADAPTER_VERSION`: they live beside
the checkpoint (``<checkpoint>-lora-v<version>``), are written into a temporary directory and
renamed into place, and are reused while present. numpy and safetensors write them (no torch).
"""

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from safetensors.numpy import save_file

ADAPTER_VERSION = 1
RANK = 4
B_SCALE = 0.5
"""B's standard deviation: an adapter at scale 1 moves a 64x64 2-step output by tens of dB."""


@dataclass(frozen=True, slots=True)
class BundledAdapter:
    name: str
    path: Path


@dataclass(frozen=True, slots=True)
class _Plan:
    name: str
    seed: int
    modules: tuple[str, ...]


ATTENTION = ("attn.to_q", "attn.to_k", "attn.to_v", "attn.to_out.0")
FEED_FORWARD = ("ff.net.0.proj", "ff.net.2")
PLANS = (_Plan("omniqual-a", 1, ATTENTION + FEED_FORWARD), _Plan("omniqual-b", 2, ATTENTION))


def bundled_adapters(checkpoint_dir: Path) -> tuple[BundledAdapter, ...]:
    """The bundled adapters of this checkpoint, written on first use; () when its transformer is
    not one they are made for (only SD3's)."""
    config_path = checkpoint_dir / "transformer" / "config.json"
    try:
        config = json.loads(config_path.read_text())
    except (OSError, ValueError):
        return ()
    if config.get("_class_name") != "SD3Transformer2DModel":
        return ()
    root = checkpoint_dir.parent / f"{checkpoint_dir.name}-lora-v{ADAPTER_VERSION}"
    if not all((root / plan.name / "adapter_config.json").is_file() for plan in PLANS):
        _write_all(root, config)
    return tuple(BundledAdapter(plan.name, root / plan.name) for plan in PLANS)


def _dims(config: dict[str, object]) -> dict[str, tuple[int, int]]:
    heads, head_dim = config["num_attention_heads"], config["attention_head_dim"]
    assert isinstance(heads, int) and isinstance(head_dim, int)
    inner = heads * head_dim
    # diffusers' FeedForward in SD3 blocks: inner -> 4 x inner (GELU) -> inner.
    return {**{m: (inner, inner) for m in ATTENTION},
            "ff.net.0.proj": (inner, 4 * inner), "ff.net.2": (4 * inner, inner)}  # fmt: skip


def _write_all(root: Path, config: dict[str, object]) -> None:
    root.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{root.name}.", dir=root.parent))
    staging.chmod(0o755)  # the server reads it; mkdtemp makes it private
    try:
        for plan in PLANS:
            _write(staging / plan.name, plan, config)
        try:
            staging.rename(root)
        except OSError:
            if not root.is_dir():
                raise
            shutil.rmtree(staging, ignore_errors=True)  # another process wrote the same ones
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _write(directory: Path, plan: _Plan, config: dict[str, object]) -> None:
    directory.mkdir()
    dims, layers = _dims(config), config["num_layers"]
    assert isinstance(layers, int)
    rng = np.random.default_rng(plan.seed)
    tensors: dict[str, np.ndarray] = {}
    for block in range(layers):
        for module in plan.modules:
            fan_in, fan_out = dims[module]
            key = f"base_model.model.transformer_blocks.{block}.{module}"
            tensors[f"{key}.lora_A.weight"] = (
                rng.standard_normal((RANK, fan_in)) / np.sqrt(fan_in)
            ).astype(np.float32)
            tensors[f"{key}.lora_B.weight"] = (
                rng.standard_normal((fan_out, RANK)) * B_SCALE
            ).astype(np.float32)
    save_file(tensors, str(directory / "adapter_model.safetensors"))
    targets = [m.removeprefix("attn.") for m in plan.modules]
    adapter_config = {"peft_type": "LORA", "r": RANK, "lora_alpha": RANK,
                      "target_modules": targets, "bias": "none"}  # fmt: skip
    (directory / "adapter_config.json").write_text(json.dumps(adapter_config, indent=1))
