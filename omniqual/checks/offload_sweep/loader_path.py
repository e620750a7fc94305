"""Which loader path a DLO point took, read from its server log (G4-05, G4-06, DL-07).

vLLM-Omni 0.30's diffusers loader (``model_loader/diffusers_loader.py``) says at every DLO start
either that the loader's host-weight plan was accepted (direct checkpoint mmap: "DLO host-weight
plan active (<transfer>, <backing>)") or that it fell back to the ordinary loader and why ("DLO
direct checkpoint mmap unavailable; using ordinary loader: <reason>"). A DLO start with neither
line fell back silently: the gate fails. Direct mmap needs one device without HSDP or online
quantization; a plan accepted on TP>1, HSDP or a quantized point is a path the release must not
take, and fails too. A point that does not offload with DLO has no loader path to judge.
"""

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from omniqual.domain.recipe import FlagValue

PLAN_ACTIVE = re.compile(r"DLO host-weight plan active \((?P<detail>[^)]*)\)")
FALLBACK = re.compile(
    r"DLO direct checkpoint mmap unavailable; using ordinary loader: (?P<detail>.*)"
)

LoaderKind = Literal["mmap", "ordinary", "silent", "unreadable"]


@dataclass(frozen=True, slots=True)
class LoaderPath:
    path: LoaderKind
    detail: str
    """The plan's transfer and backing, the fallback's reason, or why the log was not read."""
    failure: str | None = None

    def as_json(self) -> dict[str, str | None]:
        return {"path": self.path, "detail": self.detail, "failure": self.failure}


def uses_dlo(flags: Mapping[str, FlagValue]) -> bool:
    """Whether a point's flags start distributed layerwise offload: the legacy flag, or an offload
    config whose layer options stream with AllGather or keep resident blocks (vLLM-Omni 0.30's
    ``offloader/config.py``: ``_public_strategy``)."""
    if _on(flags.get("enable-distributed-layerwise-offload")):
        return True
    raw = flags.get("diffusion-offload-config")
    try:
        config = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return False
    if not isinstance(config, dict) or config.get("mode", "layer") != "layer":
        return False
    options = config.get("layer_options")
    return isinstance(options, dict) and any(
        isinstance(o, dict)
        and (o.get("weight_transfer") == "allgather" or bool(o.get("resident_layers")))
        for o in options.values()
    )


def read_loader_path(log: str) -> LoaderPath:
    plan = PLAN_ACTIVE.search(log)
    if plan:
        return LoaderPath("mmap", plan.group("detail"))
    fallback = FALLBACK.search(log)
    if fallback:
        return LoaderPath("ordinary", fallback.group("detail").strip())
    return LoaderPath("silent", "neither the plan accepted nor a fallback reason in the log")


def read_log(path: Path | None) -> LoaderPath:
    if path is None:
        return LoaderPath("unreadable", "the point's server log is not available here")
    try:
        return read_loader_path(path.read_text(encoding="utf-8", errors="replace"))
    except OSError as exc:
        return LoaderPath("unreadable", f"the point's server log cannot be read: {exc}")


def judge_loader(flags: Mapping[str, FlagValue], found: LoaderPath) -> LoaderPath:
    """``found`` with its failure: a silent fallback, or direct mmap where it must not run."""
    if found.path == "silent":
        return replace(found, failure="DLO started with neither its host-weight plan accepted nor "
                       "a fallback reason logged (a silent fallback)")  # fmt: skip
    if found.path == "mmap":
        barred = _mmap_barred(flags)
        if barred:
            return replace(found, failure=f"direct checkpoint mmap ({found.detail}) with "
                           f"{', '.join(barred)}: it needs one device without HSDP or online "
                           "quantization, else the ordinary loader")  # fmt: skip
    return found


def _mmap_barred(flags: Mapping[str, FlagValue]) -> list[str]:
    tp = flags.get("tensor-parallel-size", flags.get("tp"))
    barred = [f"tensor parallel {tp}"] if _number(tp) > 1 else []
    if _on(flags.get("use-hsdp")):
        barred.append("HSDP")
    if _on(flags.get("quantization")):
        barred.append(f"online quantization {flags.get('quantization')}")
    return barred


def _on(value: FlagValue) -> bool:
    return value is not None and value is not False and str(value).lower() not in ("false", "0")


def _number(value: FlagValue) -> float:
    try:
        return float(value) if value is not None and not isinstance(value, bool) else 0.0
    except ValueError:
        return 0.0
