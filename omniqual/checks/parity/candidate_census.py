"""F8-01's module census: which linears of the candidate a quantization reached.

vLLM-Omni 0.30 logs no per-layer line for online quantization in its diffusion loader, so the
census comes from the runtime dump (:mod:`omniqual.deploy.runtime_param_dump`): the candidate's
pipeline built on the meta device, in its serving environment, with the quantization flags of
its own recipe, every vLLM linear listed with the class of the quant method the release attached
to it. That is the attachment the server makes at construction (same code, same config); whether
the quantized weights then compute is shown by the outputs, so the census is required for
activity and never enough alone. A model whose linears take no quant config (the bundled SD3)
shows zero: a silent fallback, whatever the outputs do.

The census is folded per prefix, the block index (the first index in a name) as ``*``, later
indices kept (``ff.net.0`` and ``ff.net.2`` are different layers of every block):
``transformer.blocks.*.attn1.to_qkv: Fp8PerTensorOnlineLinearMethod x2``.
"""

import asyncio
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import JsonValue, ValidationError

from omniqual.checks.base import ArtifactSink, CheckContext
from omniqual.checks.parity.candidate_params import CandidateParityParams, QuantCensus
from omniqual.checks.parity.candidate_proof import Signal
from omniqual.deploy.runtime_params import RuntimeLinear, RuntimeParamsError, dump_runtime_params

QUANT_FLAGS = ("quantization", "diffusion-quantization-config")
"""The serve flags that choose a quantization, passed to the dump as the server gets them."""
_SHOWN_PREFIXES = 6
_INDEX = re.compile(r"\.\d+(?=\.|$)")


@dataclass(frozen=True, slots=True)
class Census:
    linears: tuple[RuntimeLinear, ...] | None
    """None when no census could be taken (``problem`` says why)."""
    problem: str | None
    source: str
    args: tuple[str, ...]
    """The quantization arguments the pipeline was built with."""


def census_by_prefix(linears: Sequence[RuntimeLinear]) -> dict[str, dict[str, int]]:
    """Per prefix (the block index folded to ``*``), how many linears carry each quant method."""
    counts: dict[str, Counter[str]] = {}
    for linear in linears:
        prefix = _INDEX.sub(".*", linear.name, count=1)
        counts.setdefault(prefix, Counter())[linear.quant_method] += 1
    return {prefix: dict(sorted(methods.items())) for prefix, methods in sorted(counts.items())}


def _quant_args(flags: dict[str, object]) -> tuple[str, ...]:
    args: list[str] = []
    for flag in QUANT_FLAGS:
        value = flags.get(flag)
        if value is not None and value is not False:
            args += [f"--{flag}", value if isinstance(value, str) else json.dumps(value)]
    return tuple(args)


async def take_census(ctx: CheckContext, params: CandidateParityParams) -> Census:
    """The candidate's pipeline built with its recipe's quantization flags, in the serving
    environment of its recipe (a URL deployment has neither here: no census)."""
    recipe, root = ctx.target.recipe, ctx.target.checkpoint_dir
    if recipe is None or root is None or not root.is_dir():
        why = ("the candidate has no local checkpoint and launch recipe here (a deployment given"
               " by URL): no module census can be taken")  # fmt: skip
        return Census(None, why, "", ())
    args = _quant_args(dict(recipe.flags))
    dtype = str(recipe.flags["dtype"]) if recipe.flags.get("dtype") else "bfloat16"
    class_name = recipe.flags.get("model-class-name")
    try:
        runtime = await asyncio.to_thread(
            dump_runtime_params, root, python=params.census_python, dtype=dtype,
            model_class_name=str(class_name) if class_name else None,
            env=recipe.effective_env(), timeout_s=params.census_timeout_s, quantization=args,
        )  # fmt: skip
    except (RuntimeParamsError, OSError, ValidationError, ValueError) as exc:
        return Census(None, f"the module census could not be taken: {exc}", "", args)
    return Census(runtime.linears, None, runtime.source, args)


def census_signal(feature: str, spec: QuantCensus, census: Census) -> Signal:
    if census.linears is None:
        return Signal(feature, "census", None, f"census: {census.problem}", required=True)
    pattern = re.compile(spec.quant_method)
    quantized = [linear for linear in census.linears if pattern.search(linear.quant_method)]
    shown = [f"{prefix}: {method} x{count}"
             for prefix, methods in census_by_prefix(quantized).items()
             for method, count in methods.items()]  # fmt: skip
    where = "; ".join(shown[:_SHOWN_PREFIXES]) + (" ..." if len(shown) > _SHOWN_PREFIXES else "")
    detail = (f"census: {len(quantized)} of {len(census.linears)} linears carry a quant method"
              f" matching /{spec.quant_method}/" + (f" ({where})" if where else ""))  # fmt: skip
    return Signal(feature, "census", len(quantized) >= spec.min_quantized, detail, required=True)


def census_entry(spec: QuantCensus, census: Census) -> dict[str, JsonValue]:
    """What the parity result records of one feature's census."""
    if census.linears is None:
        return {"taken": False, "problem": census.problem, "args": list(census.args)}
    pattern = re.compile(spec.quant_method)
    prefixes: dict[str, JsonValue] = {
        prefix: dict(methods) for prefix, methods in census_by_prefix(census.linears).items()
    }
    return {
        "taken": True, "source": census.source, "args": list(census.args),
        "quant_method": spec.quant_method,
        "quantized": sum(1 for x in census.linears if pattern.search(x.quant_method)),
        "linears": len(census.linears), "prefixes": prefixes,
    }  # fmt: skip


def store_census(sink: ArtifactSink, census: Census) -> None:
    if census.linears is None:
        return
    doc = {"source": census.source, "args": list(census.args),
           "linears": [linear.model_dump() for linear in census.linears]}  # fmt: skip
    sink.put_artifact(json.dumps(doc, indent=1).encode("utf-8"), media_type="application/json",
                      role="module-census", name="module-census.json")  # fmt: skip
