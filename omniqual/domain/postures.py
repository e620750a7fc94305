"""Default production postures of feature combinations (the production skill's combination
table, S3): what a matrix row that combines them may claim and which gates it needs beyond the
Definition of Done.

Three kinds of posture: ``refusal`` (the combination is rejected or never advertised: the row
may only be proven refused at start-up, ``unsupported_by`` alone, so no evidence can promote it),
``gates`` (a candidate that needs these gates' evidence besides its floor) and ``parent`` (the
row counts only after another row's evidence: its ``parent_row`` must be that row, and compile
holds a candidate to its parent's correctness). Every combination still starts ``not tested``.
Pure: the loader (:mod:`omniqual.specs.postures`) places each problem in the file.
"""

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from omniqual.domain.matrix import RowSpec

Values = Mapping[str, str]

ONLINE_FP8 = ("fp8-online-dit", "fp8-online-all")
"""Per-tensor online FP8: the one online quantizer DLO AllGather recognizes (finalized weights
and scales); every other online quantizer fails closed there."""
PREQUANTIZED = ("fp8-prequantized", "gguf")
"""Checkpoints quantized ahead of time: their own loading lane, not an online quantizer."""
_STEP = re.compile(r"^step/(\d+)")


def _cache_dit(v: Values) -> bool:
    return v.get("cache_policy", "none").startswith("cache_dit")


def _step_capacity(v: Values) -> int | None:
    found = _STEP.match(v.get("execution", ""))
    return int(found.group(1)) if found else None


def _online_quant(v: Values) -> bool:
    return v.get("quantization", "none") not in ("none", *PREQUANTIZED)


def _dlo(v: Values) -> bool:
    return v.get("offload", "").startswith("dlo")


def _single_device(v: Values) -> bool:
    return v.get("topology", "1-device") == "1-device"


@dataclass(frozen=True, slots=True)
class Posture:
    name: str
    applies: Callable[[Values], bool]
    why: str
    refusal: bool = False
    gates: tuple[str, ...] = ()
    parent: Callable[[Values], dict[str, str]] | None = None


POSTURES: tuple[Posture, ...] = (
    Posture("Cache-DiT + step execution", lambda v: _cache_dit(v) and _step_capacity(v) is not None,
            "not advertised until lifecycle and batching support is explicit", refusal=True),
    Posture("Cache-DiT + online FP8",
            lambda v: _cache_dit(v) and v.get("quantization", "").startswith("fp8-online"),
            "its own trajectory, hit-rate, memory and latency test",
            gates=("parity", "cache-tiers")),
    Posture("Cache-DiT", _cache_dit,
            "after an injected fault, a cancel or a disconnect the next request has its own "
            "policy, never a changed hook; interleaved and concurrent requests each get their "
            "own output", gates=("fault-injection", "isolation")),
    Posture("DLO", _dlo, "concurrent requests match their solo output and incompatible ones "
            "are refused; cut and faulted requests leave nothing behind",
            gates=("isolation", "abort", "fault-injection")),
    Posture("data parallel", lambda v: v.get("topology", "").startswith("dp"),
            "replicas under concurrent load never wait on each other (a hang is a request "
            "collective outside the DLO group)", gates=("isolation", "soak")),
    Posture("Cache-DiT + DLO", lambda v: _cache_dit(v) and _dlo(v),
            "hooks, streamed blocks, memory peaks and abort cleanup verified",
            gates=("parity", "cache-tiers", "abort")),
    Posture("HSDP + DLO AllGather",
            lambda v: "hsdp" in v.get("topology", "") and v.get("offload") == "dlo-allgather",
            "it would double-shard HSDP-managed parameters", refusal=True),
    Posture("DLO AllGather + an online quantizer other than per-tensor FP8",
            lambda v: v.get("offload") == "dlo-allgather" and _online_quant(v)
            and v.get("quantization") not in ONLINE_FP8,
            "only finalized per-tensor online FP8 is recognized; the others fail closed",
            refusal=True),
    Posture("direct checkpoint mmap + TP>1, HSDP or online quantization",
            lambda v: v.get("offload") == "direct-mmap"
            and (not _single_device(v) or _online_quant(v)),
            "the loader falls back to the ordinary path: no direct-mmap saving can be claimed",
            refusal=True),
    Posture("step execution at capacity > 1",
            lambda v: (_step_capacity(v) or 0) > 1,
            "experimental: only after the conservative step/1 row's evidence and with requests "
            "served together", gates=("isolation",),
            parent=lambda v: {**v, "execution": "step/1"}),
)  # fmt: skip


def posture_problems(
    values: Values, spec: RowSpec, parent: Values | None, gate_ids: Sequence[str] | None
) -> list[tuple[str, str]]:
    """(field, message) for each posture of ``values`` that ``spec`` does not keep. ``parent``:
    the row's parent key values (None: a baseline row); ``gate_ids``: the project's gates (a
    posture asks only for gates the project defines, as the Definition of Done does)."""
    found: list[tuple[str, str]] = []
    for posture in POSTURES:
        if not posture.applies(values):
            continue
        head = f"{posture.name} ({posture.why})"
        refusal_only = bool(spec.unsupported_by) and not spec.requires and spec.limited is None
        if posture.refusal and not refusal_only:
            found.append(("unsupported_by", f"{head}: the row may only be proven refused at "
                          "start-up (unsupported_by alone, no requires or limited)"))  # fmt: skip
        if posture.refusal or not (spec.requires or spec.limited):
            continue
        wanted = [g for g in posture.gates if gate_ids is None or g in gate_ids]
        for field, listed in _requirement_lists(spec):
            missing = [g for g in wanted if g not in listed]
            if missing:
                found.append((field, f"{head}: requires {', '.join(missing)} too"))
        if posture.parent is not None:
            expected = posture.parent(values)
            if parent is None or dict(parent) != expected:
                found.append(("parent_row", f"{head}: its parent_row must be the row "
                              + ";".join(f"{k}={v}" for k, v in expected.items())))  # fmt: skip
    return found


def _requirement_lists(spec: RowSpec) -> list[tuple[str, tuple[str, ...]]]:
    lists = [("requires", spec.requires)] if spec.requires else []
    if spec.limited is not None:
        lists.append(("limited.requires", spec.limited.requires))
    return lists
