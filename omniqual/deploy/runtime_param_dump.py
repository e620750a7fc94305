"""Subprocess entry point: vLLM-Omni's pipeline for a checkpoint, built on the meta device.

Run as ``python -m omniqual.deploy.runtime_param_dump CHECKPOINT OUT.json [--dtype D]`` inside
the serving environment. It resolves the pipeline class the way the server does
(``OmniDiffusionConfig.enrich_config``), sets up a single-rank process group (vLLM's parallel
linears ask for their tensor-parallel group at construction), replaces Hugging Face
``from_pretrained`` with a config-only construction so no weight file is opened, builds the
pipeline under ``torch.device("meta")`` and the server's default dtype, and writes every
parameter and persistent buffer per component as :class:`RuntimeParamList` JSON. With the
serve's quantization arguments (``--quantization``, ``--diffusion-quantization-config``) the
pipeline is built with them, as the server builds it, and every vLLM linear is listed with the
class of the quant method attached to it at construction (the module census). The source files
of the pipeline class and of each component vLLM-Omni builds itself are recorded too, for a
static review of the model's own loading code.

torch, vLLM and vLLM-Omni are imported only inside :func:`main`.
"""

import argparse
import contextlib
import inspect
import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _entry(name: str, tensor: Any, kind: str) -> dict[str, Any]:
    return {
        "name": name,
        "shape": list(tensor.shape),
        "dtype": str(tensor.dtype).removeprefix("torch."),
        "kind": kind,
        "optional": bool(getattr(tensor, "is_checkpoint_optional", False)),
    }


def _tensors(module: Any) -> Iterator[dict[str, Any]]:
    """Parameters, then persistent buffers (some loaders fill a buffer such as SD3's pos_embed)."""
    for name, param in module.named_parameters():
        yield _entry(name, param, "parameter")
    for mod_name, mod in module.named_modules():
        for buf_name, buf in mod._buffers.items():
            if buf is None or buf_name in mod._non_persistent_buffers_set:
                continue
            yield _entry(f"{mod_name}.{buf_name}" if mod_name else buf_name, buf, "buffer")


def _patch_from_pretrained(torch: Any, dtype: Any, made: dict[int, tuple[str, str, str]]) -> None:
    """Build Hugging Face components from their config only, on the meta device."""
    import diffusers
    import transformers

    # Typed Any on purpose: these assignments replace library classmethods at runtime.
    scheduler_mixin: Any = diffusers.SchedulerMixin
    model_mixin: Any = diffusers.ModelMixin
    pretrained_model: Any = transformers.PreTrainedModel

    def folder(path: str, subfolder: str | None) -> str:
        return os.path.join(path, subfolder) if subfolder else path

    def transformers_model(klass: Any, path: str, *args: Any, **kwargs: Any) -> Any:
        subfolder = kwargs.get("subfolder")
        config = klass.config_class.from_pretrained(folder(str(path), subfolder))
        with torch.device("meta"):
            model = klass._from_config(config, dtype=kwargs.get("torch_dtype") or dtype)
        made[id(model)] = (subfolder or ".", "transformers", klass.__name__)
        return model

    def diffusers_model(klass: Any, path: str, *args: Any, **kwargs: Any) -> Any:
        subfolder = kwargs.get("subfolder")
        config = klass.load_config(folder(str(path), subfolder))
        with torch.device("meta"):
            model = klass.from_config(config)
        model = model.to(kwargs.get("torch_dtype") or dtype)
        made[id(model)] = (subfolder or ".", "diffusers", klass.__name__)
        return model

    scheduler_from_pretrained = scheduler_mixin.__dict__["from_pretrained"].__func__

    def scheduler_on_cpu(klass: Any, *args: Any, **kwargs: Any) -> Any:
        # Schedulers compute real tables (sigmas) at construction; they hold no weights.
        with torch.device("cpu"):
            return scheduler_from_pretrained(klass, *args, **kwargs)

    scheduler_mixin.from_pretrained = classmethod(scheduler_on_cpu)
    pretrained_model.from_pretrained = classmethod(transformers_model)
    model_mixin.from_pretrained = classmethod(diffusers_model)
    original_to = torch.nn.Module.to

    def to_unless_meta(self: Any, *args: Any, **kwargs: Any) -> Any:
        # Pipelines move HF components to the device; meta tensors cannot be copied out.
        with contextlib.suppress(NotImplementedError):
            return original_to(self, *args, **kwargs)
        return self

    module_class: Any = torch.nn.Module
    module_class.to = to_unless_meta


def _linears(pipeline: Any) -> list[dict[str, str]]:
    """Every module carrying a ``quant_method`` (vLLM's LinearBase) and that method's class."""
    found = []
    for name, module in pipeline.named_modules():
        method = getattr(module, "quant_method", None)
        if method is not None:
            found.append({"name": name, "layer": type(module).__name__,
                          "quant_method": type(method).__name__})  # fmt: skip
    return found


def _source_file(klass: type) -> str | None:
    try:
        return inspect.getsourcefile(klass)
    except TypeError:  # a class defined outside any file (built in, or made at run time)
        return None


def build(
    checkpoint: Path,
    dtype_name: str,
    model_class_name: str | None,
    quantization: dict[str, Any] | None = None,
) -> dict[str, Any]:
    import torch
    import vllm_omni
    from vllm.config import set_current_vllm_config
    from vllm_omni.diffusion.config import set_current_diffusion_config
    from vllm_omni.diffusion.data import OmniDiffusionConfig
    from vllm_omni.diffusion.distributed import parallel_state
    from vllm_omni.diffusion.forward_context import set_forward_context
    from vllm_omni.diffusion.registry import DiffusionModelRegistry
    from vllm_omni.diffusion.vllm_config import create_diffusion_vllm_config

    dtype = getattr(torch, dtype_name)
    extra: dict[str, Any] = {"model_class_name": model_class_name} if model_class_name else {}
    # The server's own aliases (``quantization``, ``diffusion_quantization_config``) go through
    # the same normalisation as a serve's, so the census sees the config the server builds.
    extra.update(quantization or {})
    od_config = OmniDiffusionConfig.from_kwargs(model=str(checkpoint), dtype=dtype, **extra)
    od_config.enrich_config()
    pipeline_cls = DiffusionModelRegistry._try_load_model_cls(od_config.model_class_name)
    if pipeline_cls is None:
        raise SystemExit(f"vLLM-Omni has no pipeline class {od_config.model_class_name!r}")
    # The same context the diffusion worker builds before it constructs the pipeline.
    vllm_config = create_diffusion_vllm_config(torch.device("cpu"), od_config)
    made: dict[int, tuple[str, str, str]] = {}
    previous = torch.get_default_dtype()
    with (
        set_forward_context(vllm_config=vllm_config, omni_diffusion_config=od_config),
        set_current_vllm_config(vllm_config),
    ):
        parallel_state.init_distributed_environment(
            world_size=1, rank=0, local_rank=0, backend="gloo",
            distributed_init_method=f"tcp://127.0.0.1:{_free_port()}",
        )  # fmt: skip
        parallel_state.initialize_model_parallel(backend="gloo")
        _patch_from_pretrained(torch, dtype, made)
        torch.set_default_dtype(dtype)  # what the loader's set_default_torch_dtype does
        try:
            with set_current_diffusion_config(od_config), torch.device("meta"):
                pipeline = pipeline_cls(od_config=od_config)
        finally:
            torch.set_default_dtype(previous)
    sources = {s.prefix.rstrip("."): s.subfolder for s in getattr(pipeline, "weights_sources", ())}
    components, unowned = [], []
    files = {"pipeline": _source_file(type(pipeline))}
    for name, child in pipeline.named_children():
        tensors = list(_tensors(child))
        if id(child) in made:
            subfolder, loader, class_name = made[id(child)]
        elif name in sources:
            subfolder, loader, class_name = sources[name] or ".", "vllm-omni", type(child).__name__
            files[name] = _source_file(type(child))
        else:
            unowned += [{**t, "name": f"{name}.{t['name']}"} for t in tensors]
            continue
        components.append({
            "name": name, "subfolder": subfolder, "loader": loader, "class_name": class_name,
            "params": tensors,
        })  # fmt: skip
    return {
        "source": "meta-instantiation", "pipeline_class": type(pipeline).__name__,
        "dtype": dtype_name, "vllm_omni_version": getattr(vllm_omni, "__version__", ""),
        "components": components, "unowned": [t for t in unowned if t["kind"] == "parameter"],
        "linears": _linears(pipeline),
        "source_files": {k: v for k, v in files.items() if v is not None},
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--model-class-name", default=None)
    parser.add_argument("--quantization", default=None)
    parser.add_argument("--diffusion-quantization-config", type=json.loads, default=None)
    args = parser.parse_args()
    quantization = {
        key: value
        for key, value in (("quantization", args.quantization),
                           ("diffusion_quantization_config", args.diffusion_quantization_config))
        if value is not None
    }  # fmt: skip
    result = build(args.checkpoint, args.dtype, args.model_class_name, quantization)
    args.out.write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
