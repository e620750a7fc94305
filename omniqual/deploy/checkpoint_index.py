"""The tensor inventory of a diffusers-layout checkpoint, read from safetensors headers only.

A safetensors file starts with an 8-byte little-endian header length and a JSON header naming
every tensor's dtype, shape and byte range; nothing here reads tensor data. Each component
subfolder (``transformer/``, ``vae/``...) holding ``*.safetensors`` files becomes one
:class:`ComponentInventory`. When a ``*.safetensors.index.json`` is present it is validated the
way a strict loader needs it: every file it names exists, every tensor it lists is in the shard
it names, and every tensor in those shards is listed exactly once. Problems are collected as
data (a corrupt checkpoint is the finding, not an exception).
"""

import json
import re
import struct
from pathlib import Path

from pydantic import BaseModel, ConfigDict

INDEX_SUFFIX = ".safetensors.index.json"
MAX_HEADER_BYTES = 100 * 1024 * 1024
"""The safetensors format caps the JSON header at 100 MB; anything larger is corrupt."""
_SHARD = re.compile(r"^(?P<family>.+)-\d+-of-(?P<count>\d+)\.safetensors$")
_DTYPE_BYTES = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1,
    "I16": 2, "U16": 2, "F16": 2, "BF16": 2,
    "I32": 4, "U32": 4, "F32": 4, "I64": 8, "U64": 8, "F64": 8,
}  # fmt: skip


class CorruptHeader(ValueError):
    """A safetensors file whose header cannot be trusted (truncated, not JSON, bad offsets)."""


class TensorHeader(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    dtype: str
    shape: tuple[int, ...]
    file: str
    """Path relative to the component folder."""


class ComponentInventory(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    component: str
    """The subfolder name (``transformer``), or ``.`` for weights at the checkpoint root."""
    index_file: str | None
    files: tuple[str, ...]
    tensors: tuple[TensorHeader, ...]
    problems: tuple[str, ...]


class CheckpointInventory(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    root: str
    components: tuple[ComponentInventory, ...]

    def component(self, name: str) -> ComponentInventory | None:
        return next((c for c in self.components if c.component == name), None)


def read_header(path: Path) -> list[TensorHeader]:
    """The tensors a safetensors file declares; CorruptHeader when the header is unusable."""
    size = path.stat().st_size
    with path.open("rb") as handle:
        prefix = handle.read(8)
        if len(prefix) < 8:
            raise CorruptHeader(f"{path.name}: {size} bytes, shorter than the 8-byte header length")
        (length,) = struct.unpack("<Q", prefix)
        if length > MAX_HEADER_BYTES or 8 + length > size:
            raise CorruptHeader(
                f"{path.name}: header claims {length} bytes but the file has {size - 8} after"
                " the length field (truncated)"
            )
        raw = handle.read(length)
    try:
        header = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CorruptHeader(f"{path.name}: header is not valid JSON ({exc})") from None
    if not isinstance(header, dict):
        raise CorruptHeader(f"{path.name}: header is not a JSON object")
    data_size = size - 8 - length
    tensors: list[TensorHeader] = []
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        tensors.append(_tensor(path.name, name, entry, data_size))
    return tensors


def _tensor(file: str, name: str, entry: object, data_size: int) -> TensorHeader:
    if not isinstance(entry, dict):
        raise CorruptHeader(f"{file}: entry {name!r} is not an object")
    dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
    if not isinstance(dtype, str) or dtype not in _DTYPE_BYTES:
        raise CorruptHeader(f"{file}: tensor {name!r} has unknown dtype {dtype!r}")
    if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
        raise CorruptHeader(f"{file}: tensor {name!r} has an invalid shape {shape!r}")
    if (
        not isinstance(offsets, list)
        or len(offsets) != 2
        or not all(isinstance(o, int) for o in offsets)
        or not 0 <= offsets[0] <= offsets[1] <= data_size
    ):
        raise CorruptHeader(
            f"{file}: tensor {name!r} data_offsets {offsets!r} fall outside the"
            f" {data_size}-byte data section (truncated)"
        )
    count = 1
    for dim in shape:
        count *= dim
    if offsets[1] - offsets[0] != count * _DTYPE_BYTES[dtype]:
        raise CorruptHeader(
            f"{file}: tensor {name!r} spans {offsets[1] - offsets[0]} bytes, but {dtype}"
            f" {tuple(shape)} needs {count * _DTYPE_BYTES[dtype]}"
        )
    return TensorHeader(name=name, dtype=dtype, shape=tuple(shape), file=file)


def inventory_component(folder: Path, component: str) -> ComponentInventory:
    problems: list[str] = []
    indexes = sorted(p.name for p in folder.glob(f"*{INDEX_SUFFIX}"))
    on_disk = sorted(p.name for p in folder.glob("*.safetensors"))
    index_file = indexes[0] if indexes else None
    if len(indexes) > 1:
        problems.append(f"{component}: several index files {indexes}; a loader cannot choose")
    weight_map: dict[str, str] | None = None
    if index_file is not None:
        weight_map = _read_weight_map(folder / index_file, problems, component)
    files = sorted(set(weight_map.values())) if weight_map else on_disk
    if weight_map is None:
        _check_unindexed_families(on_disk, problems, component)
    tensors: list[TensorHeader] = []
    seen: dict[str, str] = {}
    for file in files:
        path = folder / file
        if not path.is_file():
            problems.append(f"{component}: index {index_file} names {file}, which does not exist")
            continue
        try:
            headers = read_header(path)
        except CorruptHeader as exc:
            problems.append(f"{component}: corrupt safetensors header: {exc}")
            continue
        for tensor in headers:
            if tensor.name in seen:
                problems.append(
                    f"{component}: tensor {tensor.name!r} is in both {seen[tensor.name]} and {file}"
                )
                continue
            seen[tensor.name] = file
            tensors.append(tensor)
    if weight_map is not None:
        _check_against_index(weight_map, seen, folder, index_file or "", problems, component)
        unindexed = sorted(set(on_disk) - set(files))
        if unindexed:
            problems.append(f"{component}: shard files not named by {index_file}: {unindexed}")
    return ComponentInventory(
        component=component, index_file=index_file, files=tuple(files),
        tensors=tuple(sorted(tensors, key=lambda t: t.name)), problems=tuple(problems),
    )  # fmt: skip


def _read_weight_map(path: Path, problems: list[str], component: str) -> dict[str, str] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        problems.append(f"{component}: index {path.name} is unreadable: {exc}")
        return None
    weight_map = data.get("weight_map") if isinstance(data, dict) else None
    if not isinstance(weight_map, dict) or not weight_map:
        problems.append(f"{component}: index {path.name} has no non-empty `weight_map`")
        return None
    bad = sorted(k for k, v in weight_map.items() if not isinstance(v, str) or not v)
    if bad:
        problems.append(f"{component}: index {path.name} gives no shard file for {bad}")
        return None
    return {str(k): str(v) for k, v in weight_map.items()}


def _check_against_index(
    weight_map: dict[str, str],
    seen: dict[str, str],
    folder: Path,
    index_file: str,
    problems: list[str],
    component: str,
) -> None:
    for name, file in sorted(weight_map.items()):
        if not (folder / file).is_file():
            continue  # already reported once per missing file
        actual = seen.get(name)
        if actual is None:
            problems.append(f"{component}: {index_file} lists {name!r} in {file}, which lacks it")
        elif actual != file:
            problems.append(
                f"{component}: {index_file} places {name!r} in {file}, but it is in {actual}"
            )
    for name in sorted(set(seen) - set(weight_map)):
        problems.append(f"{component}: tensor {name!r} in {seen[name]} is not in {index_file}")


def _check_unindexed_families(files: list[str], problems: list[str], component: str) -> None:
    counts: dict[str, set[int]] = {}
    for file in files:
        match = _SHARD.fullmatch(file)
        if match:
            counts.setdefault(match.group("family"), set()).add(int(match.group("count")))
    for family, totals in sorted(counts.items()):
        if len(totals) > 1:
            problems.append(f"{component}: unindexed shards of {family!r} disagree on the total")
        elif len([f for f in files if f.startswith(family + "-")]) != next(iter(totals)):
            problems.append(f"{component}: unindexed shard family {family!r} is incomplete")


def inventory_checkpoint(root: Path) -> CheckpointInventory:
    """Every weight-bearing component of a diffusers-layout checkpoint (root files included)."""
    components: list[ComponentInventory] = []
    candidates = [(root, ".")] + [(p, p.name) for p in sorted(root.iterdir()) if p.is_dir()]
    for folder, name in candidates:
        if any(folder.glob("*.safetensors")) or any(folder.glob(f"*{INDEX_SUFFIX}")):
            components.append(inventory_component(folder, name))
    return CheckpointInventory(root=str(root), components=tuple(components))
