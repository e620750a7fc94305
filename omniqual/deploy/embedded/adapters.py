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

Two broken ones go beside them, for the refusals the ``lora`` gate expects: ``omniqual-no-layer``
(a well-formed adapter whose target modules match no layer of the transformer) and
``omniqual-malformed`` (a valid ``adapter_config.json`` beside a weights file that is not
safetensors).

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

ADAPTER_VERSION = 2
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
NO_LAYER = "omniqual-no-layer"
MALFORMED = "omniqual-malformed"
_NO_SUCH_MODULE = "omniqual_no_such_module"


def bundled_adapters(checkpoint_dir: Path) -> tuple[BundledAdapter, ...]:
    """The bundled adapters of this checkpoint, written on first use; () when its transformer is
    not one they are made for (only SD3's)."""
    root = _written(checkpoint_dir)
    return () if root is None else tuple(BundledAdapter(p.name, root / p.name) for p in PLANS)


def bundled_broken_adapters(checkpoint_dir: Path) -> dict[str, BundledAdapter]:
    """The broken adapters beside the bundled ones, by what is wrong with them (``no-layer``,
    ``malformed``); {} where there are no bundled ones."""
    root = _written(checkpoint_dir)
    if root is None:
        return {}
    return {"no-layer": BundledAdapter(NO_LAYER, root / NO_LAYER),
            "malformed": BundledAdapter(MALFORMED, root / MALFORMED)}  # fmt: skip


def _written(checkpoint_dir: Path) -> Path | None:
    config_path = checkpoint_dir / "transformer" / "config.json"
    try:
        config = json.loads(config_path.read_text())
    except (OSError, ValueError):
        return None
    if config.get("_class_name") != "SD3Transformer2DModel":
        return None
    root = checkpoint_dir.parent / f"{checkpoint_dir.name}-lora-v{ADAPTER_VERSION}"
    names = (*(plan.name for plan in PLANS), NO_LAYER, MALFORMED)
    if not all((root / name / "adapter_config.json").is_file() for name in names):
        _write_all(root, config)
    return root


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
        _write_broken(staging, config)
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
    _config(directory, [m.removeprefix("attn.") for m in plan.modules])


def _write_broken(root: Path, config: dict[str, object]) -> None:
    inner = _dims(config)["attn.to_q"][0]
    rng = np.random.default_rng(3)
    key = f"base_model.model.transformer_blocks.0.{_NO_SUCH_MODULE}"
    no_layer = root / NO_LAYER
    no_layer.mkdir()
    save_file({f"{key}.lora_A.weight": rng.standard_normal((RANK, inner)).astype(np.float32),
               f"{key}.lora_B.weight": rng.standard_normal((inner, RANK)).astype(np.float32)},
              str(no_layer / "adapter_model.safetensors"))  # fmt: skip
    _config(no_layer, [_NO_SUCH_MODULE])
    malformed = root / MALFORMED
    malformed.mkdir()
    # Eight bytes of header length then text: a safetensors reader must reject it.
    (malformed / "adapter_model.safetensors").write_bytes(b"\xff" * 8 + b"not safetensors")
    _config(malformed, ["to_q"])


def _config(directory: Path, targets: list[str]) -> None:
    adapter_config = {"peft_type": "LORA", "r": RANK, "lora_alpha": RANK,
                      "target_modules": targets, "bias": "none"}  # fmt: skip
    (directory / "adapter_config.json").write_text(json.dumps(adapter_config, indent=1))
