"""Load and check the gate specs in ``gates/*.yaml``, and hash everything that decides a gate.

A gate's ``sha256`` covers the gate file **and** every project file or directory its params name
(the contract directory of ``api-contract``, the load mappings of ``strict-load``, …), so an
edited threshold, contract or mapping makes the results recorded under the old hash stale. A
gate that names no input hashes as its file alone.
"""

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import JsonValue

from omniqual.domain.axes import AxisCatalog, Selector
from omniqual.domain.gate import GateSpec
from omniqual.specs.source import SpecError, SpecProblem, YamlDocument, load_yaml, validate_document

_MAX_PATH = 1024
WATCHED = frozenset({"temp_dirs", "watch_dirs"})
"""Params naming directories the server writes to (residue is watched there): they are
observations, not inputs, so hashing their changing contents would make every result stale."""


@dataclass(frozen=True, slots=True)
class LoadedGate:
    spec: GateSpec
    path: Path
    sha256: str
    """Hash of everything that decides this gate's results: the file and ``inputs``."""
    selector: Selector
    inputs: tuple[Path, ...] = ()
    """Files and directories named by the params, hashed into ``sha256``."""


def load_gates(
    directory: Path, catalog: AxisCatalog, project_root: Path | None = None
) -> Mapping[str, LoadedGate]:
    """Every gate spec directly in ``directory``; all problems are reported together.
    Param paths are relative to ``project_root`` (default: the parent of ``directory``)."""
    root = (project_root or directory.parent).resolve()
    problems: list[SpecProblem] = []
    gates: dict[str, LoadedGate] = {}
    for path in sorted(directory.glob("*.yaml")):
        try:
            doc = load_yaml(path)
            spec = validate_document(doc, GateSpec)
        except SpecError as exc:
            problems.extend(exc.problems)
            continue
        selector = _selector(doc, spec, catalog, problems)
        if spec.id in gates:
            problems.append(
                doc.problem(("id",), f"gate id {spec.id!r} already in {gates[spec.id].path}")
            )
            continue
        inputs = named_inputs(spec.params, root)
        digest = decision_sha256(path, inputs, root)
        gates[spec.id] = LoadedGate(spec, path, digest, selector or Selector(()), inputs)
    if problems:
        raise SpecError(problems)
    return gates


def named_inputs(params: Mapping[str, JsonValue], root: Path) -> tuple[Path, ...]:
    """Existing files and directories that string values anywhere in ``params`` name, relative
    to ``root`` (never ``root`` itself or one of its ancestors), sorted."""
    found: set[Path] = set()
    stack: list[JsonValue] = [v for k, v in params.items() if k not in WATCHED]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(v for k, v in value.items() if k not in WATCHED)
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str) and value.strip() and len(value) < _MAX_PATH:
            try:
                candidate = (root / value).resolve()
                exists = candidate.exists()
            except (OSError, ValueError):  # regexes and prose are not paths
                continue
            if exists and not root.is_relative_to(candidate):
                found.add(candidate)
    return tuple(sorted(found))


def _files(path: Path) -> Iterable[Path]:
    if path.is_file():
        yield path
        return
    for child in sorted(path.rglob("*")):
        relative = child.relative_to(path).parts
        if child.is_file() and not any(p.startswith(".") or p == "__pycache__" for p in relative):
            yield child


def decision_sha256(gate_file: Path, inputs: Iterable[Path], root: Path) -> str:
    """sha256 of the gate file alone when it names no input; else over the gate file's hash
    and every input file's name (relative to ``root`` where inside it) and hash."""
    own = hashlib.sha256(gate_file.read_bytes()).hexdigest()
    lines = []
    for named in inputs:
        for file in _files(named):
            where = file.relative_to(root) if file.is_relative_to(root) else file
            lines.append(f"{where.as_posix()}\0{hashlib.sha256(file.read_bytes()).hexdigest()}")
    if not lines:
        return own
    return hashlib.sha256("\n".join((f"gate\0{own}", *lines)).encode()).hexdigest()


def _selector(
    doc: YamlDocument, spec: GateSpec, catalog: AxisCatalog, problems: list[SpecProblem]
) -> Selector | None:
    try:
        selector = Selector.parse(spec.applies_to)
    except ValueError as exc:
        problems.append(doc.problem(("applies_to",), str(exc)))
        return None
    for axis in selector.axes():
        if catalog.axis(axis) is None:
            problems.append(doc.problem(("applies_to",), f"unknown axis {axis!r}"))
    return selector
