"""SL-03's doctored checkpoint: a copy of the target's checkpoint without one tensor the runtime
retains, for a start-up that must abort.

The copy links every file to the original (a real checkpoint is gigabytes; the original is never
written) except the shard holding the dropped tensor, rewritten without it, and the component's
index files, rewritten without its entry: the tensor is simply absent, as in a checkpoint
published without it. The shard is rewritten at the byte level (the safetensors header re-packed,
every other tensor's bytes copied unchanged), so any dtype survives, bfloat16 included, and no
tensor library loads in this process.
"""

import json
import os
import struct
from dataclasses import dataclass
from pathlib import Path

from omniqual.checks.strict_load.mapping import ComponentResult
from omniqual.deploy.checkpoint_index import INDEX_SUFFIX, CheckpointInventory
from omniqual.deploy.runtime_params import RuntimeParamList
from omniqual.domain.load_mapping import LoadMappingSpec

_CHUNK = 1 << 20
_METADATA = "__metadata__"


@dataclass(frozen=True, slots=True)
class Victim:
    """The tensor dropped from the copy and the runtime parameter it alone fills."""

    component: str
    """Runtime component name (``transformer``)."""
    folder: str
    """Its checkpoint subfolder (``.`` for the root)."""
    tensor: str
    file: str
    """The tensor's file, relative to ``folder``."""
    parameter: str
    """The runtime parameter name inside the component."""

    @property
    def full_name(self) -> str:
        """The pipeline-level name a loader reports (``transformer.proj_out.weight``)."""
        return f"{self.component}.{self.parameter}"

    def describe(self) -> dict[str, str]:
        return {"component": self.component, "tensor": self.tensor, "file": self.file,
                "parameter": self.parameter}  # fmt: skip


def choose_victim(
    runtime: RuntimeParamList,
    results: list[ComponentResult],
    inventory: CheckpointInventory,
    spec: LoadMappingSpec,
) -> Victim | None:
    """One retained parameter of a component vLLM-Omni loads itself, filled by exactly one
    checkpoint tensor.

    Only a vLLM-Omni-loaded component (its own ``load_weights`` with the strict check): the
    encoders and VAE go through transformers/diffusers ``from_pretrained``, whose handling of a
    missing key is those libraries' policy, not the serving loader's. A fused destination is
    never chosen: its other shards would still mark it loaded, which is SL-02's finding (the
    static fused-destination check), not this start-up's. A ``.weight`` is preferred (every
    linear has one; a quantizing loader handles it), then the first by name, so the choice is
    stable from run to run."""
    for served in runtime.components:
        mapping = spec.components.get(served.name)
        found = inventory.component(served.subfolder or ".")
        result = next((r for r in results if r.component == served.name), None)
        if served.loader != "vllm-omni" or mapping is None or found is None or result is None:
            continue
        retained = {p.name for p in served.params if p.kind == "parameter" and not p.optional}
        fused = tuple(rule.into + "." for rule in mapping.fused)
        files = {t.name: t.file for t in found.tensors}
        candidates = [
            entry for entry in result.loaded
            if len(entry.sources) == 1 and entry.destination in retained
            and entry.sources[0] in files and not any(f in entry.destination for f in fused)
        ]  # fmt: skip
        if not candidates:
            continue
        chosen = min(candidates, key=lambda e: (not e.destination.endswith(".weight"),
                                                e.destination))  # fmt: skip
        source = chosen.sources[0]
        return Victim(served.name, found.component, source, files[source], chosen.destination)
    return None


def without_tensor(source: Path, target: Path, name: str) -> None:
    """Write ``source`` to ``target`` without tensor ``name``; every other tensor byte-identical."""
    with source.open("rb") as handle:
        (length,) = struct.unpack("<Q", handle.read(8))
        header = json.loads(handle.read(length))
        if name not in header:
            raise ValueError(f"{source.name} holds no tensor {name!r}")
        data_start = 8 + length
        kept = sorted(((k, v) for k, v in header.items() if k not in (name, _METADATA)),
                      key=lambda item: item[1]["data_offsets"][0])  # fmt: skip
        packed: dict[str, object] = {_METADATA: header[_METADATA]} if _METADATA in header else {}
        ranges: list[tuple[int, int]] = []
        offset = 0
        for key, entry in kept:
            start, end = entry["data_offsets"]
            packed[key] = {**entry, "data_offsets": [offset, offset + end - start]}
            ranges.append((start, end - start))
            offset += end - start
        raw = json.dumps(packed, separators=(",", ":")).encode("utf-8")
        raw += b" " * (-len(raw) % 8)  # the format pads its header to 8 bytes with spaces
        with target.open("wb") as out:
            out.write(struct.pack("<Q", len(raw)))
            out.write(raw)
            for start, size in ranges:
                handle.seek(data_start + start)
                while size > 0:
                    block = handle.read(min(_CHUNK, size))
                    if not block:
                        raise ValueError(f"{source.name} ends inside a tensor's bytes")
                    out.write(block)
                    size -= len(block)


def _index_without(source: Path, target: Path, name: str) -> None:
    index = json.loads(source.read_text(encoding="utf-8"))
    index.get("weight_map", {}).pop(name, None)
    target.write_text(json.dumps(index, indent=1), encoding="utf-8")


def doctored_copy(root: Path, into: Path, victim: Victim) -> None:
    """Mirror ``root`` into ``into`` (links), with ``victim`` dropped from its shard and index."""
    folder = (root / victim.folder).resolve()
    shard = root / victim.folder / victim.file
    shard_dir = shard.parent.resolve()
    for directory, _, names in os.walk(root, followlinks=True):
        here = Path(directory)
        mirrored = into / here.relative_to(root)
        mirrored.mkdir(parents=True, exist_ok=True)
        for file_name in names:
            path = here / file_name
            target = mirrored / file_name
            if here.resolve() == shard_dir and file_name == shard.name:
                without_tensor(path, target, victim.tensor)
            elif here.resolve() == folder and file_name.endswith(INDEX_SUFFIX):
                _index_without(path, target, victim.tensor)
            else:
                target.symlink_to(path.resolve())
