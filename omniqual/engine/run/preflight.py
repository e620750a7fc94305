"""Every spec a planned run will read, checked before any target is contacted or launched.

A run that would stop on a spec problem must stop before it costs a server start (minutes on a
GPU host) or touches a deployment, and must say ``file:line: field: message`` (exit 2), not
record an ``errored`` or ``skipped`` result after the fact. Checked here: each planned gate's
``params``; for every check that reads the row's contract (its params name a ``contracts_dir``:
api-contract and the parity checks) the contract of every planned row's model, which must exist
and load; for ``strict_load`` gates the load mappings they read.
"""

from collections.abc import Iterable
from pathlib import Path

from omniqual.checks.base import CheckParams
from omniqual.engine.matrix_service import ProjectMatrix
from omniqual.engine.run.gate_runner import check_params
from omniqual.engine.run.plan import PlannedGate
from omniqual.specs.gates import LoadedGate
from omniqual.specs.source import SpecError, SpecProblem, load_spec


def validate_before_contact(loaded: ProjectMatrix, items: Iterable[PlannedGate]) -> None:
    """Raise one :class:`SpecError` with every problem the planned ``items`` would hit."""
    problems: list[SpecProblem] = []
    checked: set[Path] = set()
    line_of = {str(row.key): row.line for row in loaded.matrix.rows}
    for item in items:
        try:
            params = check_params(item.gate)
        except SpecError as exc:
            problems.extend(p for p in exc.problems if p not in problems)
            continue
        contracts_dir = getattr(params, "contracts_dir", None)
        if isinstance(contracts_dir, str):
            row_at = (str(loaded.matrix.path), line_of.get(str(item.row)))
            found = _contract_problems(loaded.project.root, item, contracts_dir, row_at, checked)
            problems.extend(found)
        elif item.gate.spec.kind == "strict_load":
            problems.extend(_mapping_problems(loaded.project.root, item.gate, params, checked))
    if problems:
        raise SpecError(problems)


def _contract_problems(
    root: Path,
    item: PlannedGate,
    contracts_dir: str,
    row_at: tuple[str, int | None],
    checked: set[Path],
) -> list[SpecProblem]:
    """The row's contract must exist and load; a missing one is reported at the matrix row
    (where the gate was required), a broken one at its own line."""
    from omniqual.specs.contracts import contract_path, load_contract

    gate_id = item.gate.spec.id
    model = item.row.get("model")
    if not model:
        message = f"gate {gate_id!r} picks its contract by the row's model axis; this row has none"
        return [SpecProblem(*row_at, "requires", message)]
    path = contract_path(root / contracts_dir, model)
    if path in checked:
        return []
    checked.add(path)
    if not path.is_file():
        message = (
            f"gate {gate_id!r} needs the contract of model {model!r}, and {path} does not exist "
            f"(one contract per model: {contracts_dir}/<model>.yaml; `omniqual model init` "
            "drafts one)"
        )
        return [SpecProblem(*row_at, "requires", message)]
    try:
        load_contract(path)
    except SpecError as exc:
        return list(exc.problems)
    return []


def _mapping_problems(
    root: Path, gate: LoadedGate, params: CheckParams, checked: set[Path]
) -> list[SpecProblem]:
    from omniqual.checks.strict_load import StrictLoadParams
    from omniqual.domain.load_mapping import LoadMappingSpec

    assert isinstance(params, StrictLoadParams)  # the strict_load kind's params model
    if params.mapping:
        files = [root / params.mapping]
    else:
        directory = root / params.mappings_dir
        if not directory.is_dir():
            message = f"{directory} is not a directory of load mappings"
            return [SpecProblem(str(gate.path), None, "params.mappings_dir", message)]
        files = sorted(directory.glob("*.yaml"))
    problems: list[SpecProblem] = []
    for path in files:
        if path in checked:
            continue
        checked.add(path)
        try:
            load_spec(path, LoadMappingSpec)
        except SpecError as exc:
            problems.extend(exc.problems)
    return problems
