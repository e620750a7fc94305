"""Expand a campaign into work: which gates run on which rows, grouped by launch recipe."""

from collections.abc import Sequence
from dataclasses import dataclass

from omniqual.domain.axes import RowKey, Selector
from omniqual.domain.result import GateResult
from omniqual.engine.matrix_service import ProjectMatrix
from omniqual.specs.gates import LoadedGate
from omniqual.specs.recipes import RecipeBook
from omniqual.specs.source import SpecError, SpecProblem


@dataclass(frozen=True, slots=True)
class PlannedGate:
    gate: LoadedGate
    row: RowKey


@dataclass(frozen=True, slots=True)
class RecipeWork:
    recipe_id: str
    items: tuple[PlannedGate, ...]


@dataclass(frozen=True, slots=True)
class Plan:
    work: tuple[RecipeWork, ...]
    unplanned_rows: tuple[str, ...]
    """Rows the selection matched that have no recipe: they stay `not tested`."""

    @property
    def size(self) -> int:
        return sum(len(w.items) for w in self.work)


def gates_for_row(spec_gates: Sequence[str], only: Sequence[str]) -> list[str]:
    return [g for g in dict.fromkeys(spec_gates) if not only or g in only]


def make_plan(
    loaded: ProjectMatrix, recipes: RecipeBook, selector: Selector, only_gates: Sequence[str]
) -> Plan:
    problems = [
        SpecProblem(str(loaded.matrix.path), None, "gates", f"unknown gate {g!r}")
        for g in only_gates
        if g not in loaded.gates
    ]
    grouped: dict[str, list[PlannedGate]] = {}
    unplanned: list[str] = []
    for row in loaded.matrix.rows:
        if not selector.matches(row.key):
            continue
        spec = row.spec
        wanted = list(spec.requires) + list(spec.unsupported_by)
        if spec.limited is not None:
            wanted += list(spec.limited.requires) + list(spec.limited.rejection)
        gate_ids = [
            g
            for g in gates_for_row(wanted, only_gates)
            if loaded.gates[g].selector.matches(row.key)
        ]
        if not gate_ids:
            continue
        if spec.recipe is None:
            unplanned.append(str(row.key))
            continue
        if spec.recipe not in recipes:
            problems.append(
                SpecProblem(
                    str(loaded.matrix.path), row.line, "recipe", f"unknown recipe {spec.recipe!r}"
                )
            )
            continue
        problems.extend(_disagreements(loaded, recipes, spec.recipe, row.key, row.line))
        items = grouped.setdefault(spec.recipe, [])
        items.extend(PlannedGate(loaded.gates[g], row.key) for g in gate_ids)
    if problems:
        raise SpecError(problems)
    work = tuple(RecipeWork(rid, tuple(items)) for rid, items in grouped.items())
    return Plan(work, tuple(unplanned))


def _disagreements(
    loaded: ProjectMatrix, recipes: RecipeBook, recipe_id: str, key: RowKey, line: int | None
) -> list[SpecProblem]:
    """A recipe says which axis values it realizes; a row that names it must agree."""
    found = []
    for axis, value in recipes[recipe_id].recipe.row.items():
        if loaded.matrix.catalog.axis(axis) is None:
            where = str(recipes[recipe_id].path)
            found.append(SpecProblem(where, recipes[recipe_id].line, f"row.{axis}", "unknown axis"))
        elif key.get(axis) != value:
            message = f"recipe {recipe_id!r} realizes {axis}={value}, the row has {key.get(axis)}"
            found.append(SpecProblem(str(loaded.matrix.path), line, "recipe", message))
    return found


def done_keys(results: Sequence[GateResult]) -> set["DoneKey"]:
    """Results a resumed campaign keeps: anything but a harness fault."""
    return {
        (r.gate_id, r.gate_version, r.gate_spec_sha256, r.row)
        for r in results
        if r.outcome.value != "errored"
    }


DoneKey = tuple[str, int, str | None, str]


def is_done(item: PlannedGate, done: set[DoneKey]) -> bool:
    return (item.gate.spec.id, item.gate.spec.version, item.gate.sha256, str(item.row)) in done
