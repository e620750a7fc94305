"""``gate run``: one gate on the matrix rows a selector picks, against a URL or a recipe."""

from collections.abc import Sequence
from pathlib import Path

from omniqual.deploy.fingerprint import collect_fingerprint
from omniqual.domain.axes import Selector
from omniqual.domain.recipe import LaunchRecipe, RecipeKind
from omniqual.domain.result import GateResult
from omniqual.engine.campaign import run_plan
from omniqual.engine.events import Observer, ignore
from omniqual.engine.gate_runner import check_params
from omniqual.engine.matrix_service import load_project_matrix
from omniqual.engine.plan import PlannedGate
from omniqual.engine.store import RunWriter
from omniqual.specs.project import find_project
from omniqual.specs.recipes import LoadedRecipe, load_recipes

DEFAULT_MATRIX = "embedded-cpu.yaml"


async def run_single_gate(
    gate_id: str,
    target: str,
    row_selector: str,
    *,
    matrix: Path | None,
    evidence_root: Path,
    command: Sequence[str],
    observe: Observer = ignore,
) -> list[GateResult]:
    project = find_project()
    loaded = load_project_matrix(matrix or project.matrices / DEFAULT_MATRIX)
    if gate_id not in loaded.gates:
        known = ", ".join(sorted(loaded.gates))
        raise ValueError(f"unknown gate {gate_id!r} (known: {known})")
    gate = loaded.gates[gate_id]
    check_params(gate)
    selector = Selector.parse(row_selector)
    for axis in selector.axes():
        if loaded.matrix.catalog.axis(axis) is None:
            raise ValueError(f"unknown axis {axis!r} in --row")
    recipes = load_recipes(loaded.project.runners)
    is_url = target.startswith(("http://", "https://"))
    if is_url:
        recipe = LoadedRecipe(
            LaunchRecipe(id="given-url", description="a deployment given by URL",
                         kind=RecipeKind.URL, url=target),
            project.runners / "given-url.yaml",
            None,
        )  # fmt: skip
    else:
        recipe = recipes[target]
    rows = [
        row.key
        for row in loaded.matrix.rows
        if selector.matches(row.key)
        and gate.selector.matches(row.key)
        and (is_url or row.spec.recipe == target)
    ]
    if not rows:
        raise ValueError(
            f"no matrix row matches --row {row_selector!r} for gate {gate_id!r} and target "
            f"{target!r}; see `omniqual matrix render` for the rows"
        )
    items = [PlannedGate(gate, key) for key in rows]
    writer = RunWriter.create(evidence_root, command=command, environment=collect_fingerprint())
    with writer:
        await run_plan([(recipe, items)], writer, root=loaded.project.root, command=command,
                       observe=observe)  # fmt: skip
        return list(writer.results)
