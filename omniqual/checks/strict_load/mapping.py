"""Map a checkpoint's tensors onto the serving model's parameters, the way a strict loader would.

For one component: checkpoint ignores are set aside, renames applied in order, fused sources
grouped under their destination by shard id; every destination is then looked up among the
runtime parameters and compared by shape (fused: the concatenation of its shards) and dtype.
The result keeps SL-01's four sets (expected, loaded, unexpected, ignored) plus every defect as
one finding string that names the tensor.
"""

import re
from collections import defaultdict

from pydantic import BaseModel, ConfigDict

from omniqual.deploy.checkpoint_index import ComponentInventory, TensorHeader
from omniqual.deploy.runtime_params import RuntimeComponent, RuntimeParam
from omniqual.domain.load_mapping import ComponentMapping, FusedDestination, Ignore

TORCH_DTYPE = {
    "F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16",
    "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2", "I64": "int64", "I32": "int32",
    "I16": "int16", "I8": "int8", "U8": "uint8", "BOOL": "bool",
}  # fmt: skip
_FLOAT_RUNTIME = {"float64", "float32", "float16", "bfloat16"}


class LoadedEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    destination: str
    sources: tuple[str, ...]


class IgnoredEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    side: str
    reason: str | None


class ComponentResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    component: str
    expected: int
    """Runtime parameters that must come from the checkpoint."""
    loaded: tuple[LoadedEntry, ...]
    ignored: tuple[IgnoredEntry, ...]
    findings: tuple[str, ...]
    """Each defect, naming the tensor: unexpected, missing, incomplete fused, shape, dtype."""
    notes: tuple[str, ...] = ()


def _match(ignores: tuple[Ignore, ...], side: str, name: str) -> Ignore | None:
    return next((i for i in ignores if i.side == side and re.fullmatch(i.pattern, name)), None)


def _fused_target(
    name: str, fused: tuple[FusedDestination, ...]
) -> tuple[str, str | int, FusedDestination] | None:
    """Like vLLM-Omni's ``stacked_params_mapping`` loop: the first rule whose source matches."""
    for rule in fused:
        for source, shard_id in zip(rule.sources, rule.shard_ids, strict=True):
            if source + "." in name:
                return name.replace(source + ".", rule.into + ".", 1), shard_id, rule
    return None


def _reshaped(shape: tuple[int, ...], dest: str, mapping: ComponentMapping) -> tuple[int, ...]:
    for rule in mapping.reshapes:
        if re.fullmatch(rule.pattern, dest) and rule.op == "unsqueeze-last":
            return (*shape, 1)
    return shape


def _dtype_finding(
    component: str, tensor: TensorHeader, param: RuntimeParam, mapping: ComponentMapping
) -> str | None:
    if param.dtype in _FLOAT_RUNTIME:
        if tensor.dtype in mapping.checkpoint_dtypes:
            return None
        allowed = "/".join(mapping.checkpoint_dtypes)
        return (
            f"{component}: dtype of {tensor.name!r} is {tensor.dtype}; runtime {param.name!r} is"
            f" {param.dtype} and the mapping accepts {allowed} for it"
        )
    if TORCH_DTYPE.get(tensor.dtype) != param.dtype:
        return (
            f"{component}: dtype of {tensor.name!r} is {tensor.dtype}, runtime {param.name!r}"
            f" is {param.dtype}"
        )
    return None


def map_component(
    inventory: ComponentInventory | None, runtime: RuntimeComponent, mapping: ComponentMapping
) -> ComponentResult:
    comp = runtime.name
    findings: list[str] = []
    notes: list[str] = []
    for ignore in mapping.ignores:
        if not (ignore.reason or "").strip():
            findings.append(
                f"{comp}: {ignore.side} ignore {ignore.pattern!r} has no reason"
                " (an unexplained skip is not an ignore policy)"
            )
    params = {p.name: p for p in runtime.params}
    ignored: list[IgnoredEntry] = []
    direct: dict[str, list[TensorHeader]] = defaultdict(list)
    fused: dict[str, dict[str | int, list[TensorHeader]]] = defaultdict(lambda: defaultdict(list))
    fused_rule: dict[str, FusedDestination] = {}
    for tensor in inventory.tensors if inventory else ():
        skipped = _match(mapping.ignores, "checkpoint", tensor.name)
        if skipped is not None:
            ignored.append(IgnoredEntry(name=tensor.name, side="checkpoint", reason=skipped.reason))
            continue
        name = tensor.name
        for rename in mapping.renames:
            name = re.sub(rename.pattern, rename.replacement, name)
        target = _fused_target(name, mapping.fused)
        if target is None:
            direct[name].append(tensor)
        else:
            dest, shard_id, rule = target
            fused[dest][shard_id].append(tensor)
            fused_rule[dest] = rule
    loaded: list[LoadedEntry] = []
    for dest, tensors in sorted(direct.items()):
        origin = ", ".join(repr(t.name) for t in tensors)
        param = params.get(dest)
        if param is None:
            arrow = "" if tensors[0].name == dest else f" (renamed {dest!r})"
            findings.append(
                f"{comp}: unexpected checkpoint tensor {origin}{arrow} maps to no runtime parameter"
            )
            continue
        if len(tensors) > 1:
            findings.append(f"{comp}: {origin} all load into {dest!r}; one would silently win")
        tensor = tensors[0]
        if _reshaped(tensor.shape, dest, mapping) != param.shape:
            findings.append(
                f"{comp}: shape of {tensor.name!r} is {list(tensor.shape)}, runtime {dest!r}"
                f" expects {list(param.shape)}"
            )
        finding = _dtype_finding(comp, tensor, param, mapping)
        if finding:
            findings.append(finding)
        loaded.append(LoadedEntry(destination=dest, sources=tuple(t.name for t in tensors)))
    for dest, shards in sorted(fused.items()):
        findings += _check_fused(comp, dest, shards, fused_rule[dest], params.get(dest), mapping)
        sources = tuple(t.name for group in shards.values() for t in group)
        if dest in params:
            loaded.append(LoadedEntry(destination=dest, sources=sources))
    covered = {entry.destination for entry in loaded}
    expected = 0
    for param in runtime.params:
        if param.kind != "parameter" or param.optional:
            continue
        expected += 1
        if param.name in covered:
            continue
        waived = _match(mapping.ignores, "runtime", param.name)
        if waived is not None:
            ignored.append(IgnoredEntry(name=param.name, side="runtime", reason=waived.reason))
            continue
        findings.append(
            f"{comp}: missing runtime parameter {param.name!r}: no checkpoint source covers it"
        )
    for ignore in mapping.ignores:
        if not any(e.side == ignore.side and re.fullmatch(ignore.pattern, e.name) for e in ignored):
            notes.append(f"{comp}: {ignore.side} ignore {ignore.pattern!r} matched nothing")
    return ComponentResult(
        component=comp, expected=expected, loaded=tuple(loaded), ignored=tuple(ignored),
        findings=tuple(findings), notes=tuple(notes),
    )  # fmt: skip


def _check_fused(
    comp: str,
    dest: str,
    shards: dict[str | int, list[TensorHeader]],
    rule: FusedDestination,
    param: RuntimeParam | None,
    mapping: ComponentMapping,
) -> list[str]:
    names = ", ".join(repr(t.name) for group in shards.values() for t in group)
    if param is None:
        return [
            f"{comp}: unexpected checkpoint tensors {names} fuse into {dest!r},"
            " which is no runtime parameter"
        ]
    findings: list[str] = []
    missing = [sid for sid in rule.shard_ids if sid not in shards]
    if missing:
        wanted = ", ".join(
            f"shard {sid!r} ({dest.replace(rule.into + '.', src + '.', 1)!r})"
            for src, sid in zip(rule.sources, rule.shard_ids, strict=True)
            if sid in missing
        )
        return [f"{comp}: fused {dest!r} is incomplete: missing {wanted}; present {names}"]
    for sid, group in shards.items():
        if len(group) > 1:
            findings.append(f"{comp}: fused {dest!r} shard {sid!r} has several sources: {group}")
    ordered = [shards[sid][0] for sid in rule.shard_ids]
    ranks = {len(t.shape) for t in ordered}
    if len(ranks) != 1 or rule.dim >= len(ordered[0].shape):
        return [*findings, f"{comp}: fused {dest!r} shards have incompatible ranks: {names}"]
    rest = {tuple(d for i, d in enumerate(t.shape) if i != rule.dim) for t in ordered}
    concat = list(ordered[0].shape)
    concat[rule.dim] = sum(t.shape[rule.dim] for t in ordered)
    if len(rest) != 1 or tuple(concat) != param.shape:
        shapes = ", ".join(f"{t.name}={list(t.shape)}" for t in ordered)
        findings.append(
            f"{comp}: shape of fused {dest!r}: shards {shapes} concatenate to {concat},"
            f" runtime expects {list(param.shape)}"
        )
    if len({t.dtype for t in ordered}) > 1:
        findings.append(
            f"{comp}: fused {dest!r} shards disagree on dtype: {[t.dtype for t in ordered]}"
        )
    for tensor in ordered:
        finding = _dtype_finding(comp, tensor, param, mapping)
        if finding:
            findings.append(finding)
    return findings
