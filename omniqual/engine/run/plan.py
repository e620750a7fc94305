"""Expand a campaign into work: which gates run on which rows, grouped by launch recipe."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from omniqual.deploy.launcher import placeholder_values
from omniqual.deploy.serve_config import serve_config_sha256
from omniqual.domain.axes import RowKey, Selector
from omniqual.domain.log_proof import LogProof, log_proofs
from omniqual.domain.matrix import RestartPolicy, RowSpec
from omniqual.domain.recipe import RecipeKind
from omniqual.domain.result import GateResult
from omniqual.engine.matrix_service import ProjectMatrix
from omniqual.engine.targets.served_identity import REQUEST_AXES, bundled_checkpoint_name
from omniqual.specs.gates import LoadedGate
from omniqual.specs.recipes import LoadedRecipe, RecipeBook, load_recipes
from omniqual.specs.source import SpecError, SpecProblem


@dataclass(frozen=True, slots=True)
class PlannedGate:
    gate: LoadedGate
    row: RowKey
    restart_policy: RestartPolicy = RestartPolicy.RECOVERS
    """The row's declared restart policy (what a fault-injection gate holds it to)."""
    log_proofs: tuple[LogProof, ...] = ()
    """The row's axes its server's log must show resolved as declared."""


@dataclass(frozen=True, slots=True)
class RecipeWork:
    recipe_id: str
    items: tuple[PlannedGate, ...]


@dataclass(frozen=True, slots=True)
class Plan:
    work: tuple[RecipeWork, ...]
    unplanned_rows: tuple[str, ...]
    """Rows the selection matched that have no recipe: they stay `not tested`."""
    notes: tuple[str, ...] = ()
    """Findings that are not errors (recipes whose serve configurations are one and the same)."""
    left_out: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Per selected row, the gates it wants that the campaign's parts leave to another one."""

    @property
    def size(self) -> int:
        return sum(len(w.items) for w in self.work)


def gates_for_row(spec_gates: Sequence[str], only: Sequence[str]) -> list[str]:
    return [g for g in dict.fromkeys(spec_gates) if not only or g in only]


def wanted_gates(spec: RowSpec) -> list[str]:
    """Every gate whose result can decide the row's state."""
    wanted = [*spec.requires, *spec.unsupported_by]
    if spec.limited is not None:
        wanted += [*spec.limited.requires, *spec.limited.rejection]
    return wanted


Parts = Sequence[tuple[Selector, Sequence[str]]]


def in_parts(row: RowKey, gate_id: str, parts: Parts) -> bool:
    """Whether a campaign made of ``parts`` runs ``gate_id`` on ``row`` (no parts: every gate)."""
    return not parts or any(
        selector.matches(row) and (not gates or gate_id in gates) for selector, gates in parts
    )


def make_plan(
    loaded: ProjectMatrix,
    recipes: RecipeBook,
    selector: Selector,
    only_gates: Sequence[str],
    parts: Parts = (),
) -> Plan:
    problems = [
        SpecProblem(str(loaded.matrix.path), None, "gates", f"unknown gate {g!r}")
        for g in only_gates
        if g not in loaded.gates
    ]
    problems += [
        SpecProblem(str(loaded.matrix.path), None, "include", f"unknown gate {g!r}")
        for _, gates in parts
        for g in gates
        if g not in loaded.gates
    ]
    grouped: dict[str, list[PlannedGate]] = {}
    unplanned: list[str] = []
    left_out: list[tuple[str, tuple[str, ...]]] = []
    for row in loaded.matrix.rows:
        if not selector.matches(row.key):
            continue
        spec = row.spec
        wanted = [
            g
            for g in gates_for_row(wanted_gates(spec), only_gates)
            if loaded.gates[g].selector.matches(row.key)
        ]
        gate_ids = [g for g in wanted if in_parts(row.key, g, parts)]
        if len(gate_ids) < len(wanted):
            left_out.append((str(row.key), tuple(g for g in wanted if g not in gate_ids)))
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
        problems.extend(disagreements(loaded, recipes, spec.recipe, row.key, row.line))
        items = grouped.setdefault(spec.recipe, [])
        proofs = log_proofs(loaded.matrix.catalog, row.key)
        items.extend(PlannedGate(loaded.gates[g], row.key, spec.restart_policy, proofs)
                     for g in gate_ids)  # fmt: skip
    if problems:
        raise SpecError(problems)
    work = tuple(RecipeWork(rid, tuple(items)) for rid, items in grouped.items())
    notes = same_serve_configs(loaded, recipes, list(grouped))
    return Plan(work, tuple(unplanned), notes, tuple(left_out))


def disagreements(
    loaded: ProjectMatrix, recipes: RecipeBook, recipe_id: str, key: RowKey, line: int | None
) -> list[SpecProblem]:
    """A recipe declares every deployment axis of the rows it realizes (all but the request's
    own: task, API mode, output transport, shape schedule); a row that names it must agree with
    every axis it declares."""
    entry = recipes[recipe_id]
    found = [
        SpecProblem(str(entry.path), entry.line, "row",
                    f"recipe {recipe_id!r} does not declare axis {axis!r} (row {key} has "
                    f"{axis}={key.get(axis)})")
        for axis in loaded.matrix.catalog.names()
        if axis not in REQUEST_AXES and axis not in entry.recipe.row
    ]  # fmt: skip
    for axis, value in recipes[recipe_id].recipe.row.items():
        if loaded.matrix.catalog.axis(axis) is None:
            where = str(recipes[recipe_id].path)
            found.append(SpecProblem(where, recipes[recipe_id].line, f"row.{axis}", "unknown axis"))
        elif key.get(axis) != value:
            message = f"recipe {recipe_id!r} realizes {axis}={value}, the row has {key.get(axis)}"
            found.append(SpecProblem(str(loaded.matrix.path), line, "recipe", message))
    return found


def same_serve_configs(
    loaded: ProjectMatrix, recipes: RecipeBook, recipe_ids: Sequence[str] | None = None
) -> tuple[str, ...]:
    """Recipes (of the matrix's rows, or ``recipe_ids``) whose serve configurations normalize to
    the same one: their rows are one deployment under two names, and share evidence."""
    wanted = recipe_ids if recipe_ids is not None else [
        r.spec.recipe for r in loaded.matrix.rows if r.spec.recipe in recipes
    ]  # fmt: skip
    by_hash: dict[str, list[str]] = {}
    for recipe_id in dict.fromkeys(wanted):
        if recipe_id is None:
            continue
        digest = recipe_serve_config(recipes[recipe_id])
        if digest is not None:
            by_hash.setdefault(digest, []).append(recipe_id)
    return tuple(
        f"recipes {', '.join(ids)} normalize to the same serve configuration "
        f"(sha256 {digest[:12]}): one deployment under {len(ids)} names, sharing its evidence"
        for digest, ids in sorted(by_hash.items())
        if len(ids) > 1
    )


def serve_config_notes(loaded: ProjectMatrix) -> tuple[str, ...]:
    """Same-configuration findings for the recipes the matrix's rows name (none when the
    project has no runners directory)."""
    if not loaded.project.runners.is_dir():
        return ()
    return same_serve_configs(loaded, load_recipes(loaded.project.runners))


def recipe_serve_config(entry: LoadedRecipe) -> str | None:
    """The serve-config fingerprint a launch of ``entry`` will record (None for a URL)."""
    recipe = entry.recipe
    if recipe.kind is RecipeKind.URL:
        return None
    model = recipe.model
    if recipe.kind is RecipeKind.EMBEDDED and recipe.pipeline:
        model = f"/{bundled_checkpoint_name(recipe.pipeline)}"  # only its name is configuration
    values = placeholder_values(recipe, "127.0.0.1", 0, model, entry.directory)
    return serve_config_sha256(recipe.render_argv(values), recipe.effective_env())


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


def launch_groups(
    recipes: Sequence[LoadedRecipe], urls: Mapping[str, str] | None = None
) -> tuple[tuple[int, ...], ...]:
    """Positions of ``recipes`` that one launch serves, in first-appearance order: recipes whose
    serve configurations normalize to the same one are one deployment, so the first one's
    launch serves the rows of all of them. A URL target or a campaign URL override is never
    merged (what answers there is not ours to share)."""
    groups: dict[str, list[int]] = {}
    order: list[list[int]] = []
    for position, entry in enumerate(recipes):
        digest = None if entry.recipe.id in (urls or {}) else recipe_serve_config(entry)
        if digest is not None and digest in groups:
            groups[digest].append(position)
            continue
        group = [position]
        order.append(group)
        if digest is not None:
            groups[digest] = group
    return tuple(tuple(g) for g in order)
