"""Load a matrix with its project's gates, compile it from the evidence in run directories
(:mod:`omniqual.compile`), and read or write a compiled matrix."""

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from pydantic import BaseModel, ValidationError

from omniqual.compile.classes import compile_digests
from omniqual.compile.collect import collect_digests
from omniqual.domain.matrix import CompiledMatrix, LoadedMatrix
from omniqual.domain.rules import CurrentGate
from omniqual.engine.run.gate_runner import check_params
from omniqual.specs.gates import LoadedGate, decision_sha256, load_gates, named_inputs
from omniqual.specs.matrix import load_catalog, load_matrix
from omniqual.specs.project import ProjectPaths, find_project
from omniqual.specs.source import SpecError, SpecProblem


@dataclass(frozen=True, slots=True)
class ProjectMatrix:
    project: ProjectPaths
    matrix: LoadedMatrix
    gates: Mapping[str, LoadedGate]

    def current_gates(self) -> dict[str, CurrentGate]:
        """Per gate, the version and content hash a result must carry to be current."""
        return {
            gate_id: CurrentGate(gate.spec.version, gate.sha256)
            for gate_id, gate in self.gates.items()
        }


def load_project_matrix(path: Path) -> ProjectMatrix:
    """The matrix at ``path`` checked against its project's axes and gates."""
    project = find_project(path.resolve().parent)
    catalog = load_catalog(project.axes_file)
    gates = {
        gate_id: with_check_inputs(gate, project.root)
        for gate_id, gate in load_gates(project.gates, catalog, project.root).items()
    }
    return ProjectMatrix(project, load_matrix(path, gates), gates)


def with_check_inputs(gate: LoadedGate, root: Path) -> LoadedGate:
    """``gate`` with the inputs its check reads by default (params its file leaves out, such
    as a default contracts directory) hashed in too, so the spec hash covers them as well."""
    try:
        params = check_params(gate).model_dump(mode="json")
    except (SpecError, ImportError):  # unknown kind, bad params or a check whose extra is not
        return gate  # installed: running the gate fails the same way, nothing is recorded
    inputs = named_inputs(params, root.resolve())
    if inputs == gate.inputs:
        return gate
    return replace(gate, sha256=decision_sha256(gate.path, inputs, root.resolve()), inputs=inputs)


def compile_from_dirs(
    loaded: ProjectMatrix, dirs: Sequence[Path], output: Path | None
) -> CompiledMatrix:
    anchor = (output.parent if output else Path.cwd()).resolve()
    digests = collect_digests([d.resolve() for d in dirs], anchor)
    return compile_digests(loaded.matrix, loaded.current_gates(), digests,
                           evidence_dirs=tuple(str(d) for d in dirs))  # fmt: skip


def declared_state_problems(loaded: ProjectMatrix, dirs: Sequence[Path]) -> list[SpecProblem]:
    """Rows whose declared state the evidence does not support (no evidence: only `not tested`
    may be declared)."""
    compiled = compile_from_dirs(loaded, dirs, None)
    states = {row.key: row for row in compiled.rows}
    problems = []
    for row in loaded.matrix.rows:
        declared = row.spec.declared
        derived = states[str(row.key)]
        if declared is not None and declared is not derived.state:
            why = "; ".join(derived.reasons[:2])
            problems.append(
                SpecProblem(
                    str(loaded.matrix.path),
                    row.line,
                    "declared",
                    f"row {row.key} is declared {declared.value!r} but the evidence says "
                    f"{derived.state.value!r} ({why})",
                )
            )
    return problems


def read_compiled(path: Path) -> CompiledMatrix:
    try:
        return CompiledMatrix.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        raise SpecError([SpecProblem(str(path), None, "", "file not found")]) from None
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        field = ".".join(str(p) for p in first["loc"])
        raise SpecError([SpecProblem(str(path), None, field, first["msg"])]) from None


def load_compiled_or_compile(
    path: Path, dirs: Sequence[Path], output: Path | None
) -> CompiledMatrix:
    if path.suffix == ".json":
        return read_compiled(path)
    return compile_from_dirs(load_project_matrix(path), dirs, output)


def write_json(model: BaseModel, path: Path) -> None:
    """Atomically write ``model`` as JSON with sorted keys."""
    data = json.dumps(model.model_dump(mode="json"), sort_keys=True, indent=1) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
