"""``gate run``: one gate on the matrix rows a selector picks, against a URL or a recipe.

A result may land only on rows the measured deployment is. For a launched recipe those are the
rows that name it (and agree with every axis it declares). For a URL they are the rows consistent
with what the server reports (:mod:`omniqual.engine.targets.served_identity`); when rows of more
than one deployment remain, nothing runs and the candidates are listed for ``--row`` to choose.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil

from omniqual.deploy.agent.client import AgentAccess
from omniqual.deploy.fingerprint import collect_fingerprint
from omniqual.domain.axes import RowKey, Selector
from omniqual.domain.log_proof import log_proofs
from omniqual.domain.matrix import PlannedRow
from omniqual.domain.provenance import HARNESS_HOST, NOT_VISIBLE
from omniqual.domain.recipe import LaunchRecipe, RecipeKind
from omniqual.domain.result import GateResult
from omniqual.engine.matrix_service import ProjectMatrix, load_project_matrix
from omniqual.engine.run.campaign import run_plan
from omniqual.engine.run.events import Observer, ignore
from omniqual.engine.run.gate_runner import check_params
from omniqual.engine.run.plan import PlannedGate, disagreements, wanted_gates
from omniqual.engine.run.preflight import validate_before_contact
from omniqual.engine.targets import served_identity
from omniqual.engine.targets.agents import agent_hosts
from omniqual.engine.targets.references import ReferenceBook
from omniqual.engine.targets.served_identity import RowVerdict, ServedIdentity
from omniqual.engine.targets.targets import check_reachable
from omniqual.evidence.store import RunWriter
from omniqual.specs.gates import LoadedGate
from omniqual.specs.project import find_project
from omniqual.specs.recipes import LoadedRecipe, RecipeBook, load_recipes
from omniqual.specs.source import SpecError

DEFAULT_MATRIX = "embedded-cpu.yaml"


class AmbiguousTarget(ValueError):
    """Rows of several deployments fit what the target reported: the user must pick (exit 2)."""


async def run_single_gate(
    gate_id: str,
    target: str,
    row_selector: str,
    *,
    matrix: Path | None,
    evidence_root: Path,
    command: Sequence[str],
    observe: Observer = ignore,
    server_pid: int | None = None,
    agent: AgentAccess | None = None,
) -> list[GateResult]:
    project = find_project()
    loaded = load_project_matrix(matrix or project.matrices / DEFAULT_MATRIX)
    _known_gate(loaded, gate_id)  # said before anything about the target
    recipes = load_recipes(loaded.project.runners)
    is_url = target.startswith(("http://", "https://"))
    if server_pid is not None:
        check_server_pid(server_pid, is_url=is_url)
    if agent is not None:
        check_agent(agent, is_url=is_url, server_pid=server_pid)
    if is_url:
        recipe = LoadedRecipe(
            LaunchRecipe(id="given-url", description="a deployment given by URL",
                         kind=RecipeKind.URL, url=target),
            project.runners / "given-url.yaml",
            None,
        )  # fmt: skip
    else:
        recipe = recipes[target]
    gate, selected = _selected_rows(loaded, recipes, gate_id, row_selector, target, is_url)
    rows = [row.key for row in selected]
    if recipe.recipe.kind is RecipeKind.URL:
        url = recipe.recipe.url
        assert url is not None  # a url recipe always has one (LaunchRecipe checks)
        await check_reachable(url)
        identity = await served_identity.identify_deployment(url)
        rows = rows_served_by(identity, loaded, recipes, selected_keys=rows, gate=gate,
                              row_selector=row_selector)  # fmt: skip
        if is_url and identity.model_ids:
            # The rows were matched through their own recipes; the given URL is the deployment
            # serving this id.
            given = recipe.recipe.model_copy(update={"model": identity.model_ids[0]})
            recipe = LoadedRecipe(given, recipe.path, recipe.line)
    policy = {str(row.key): row.spec.restart_policy for row in selected}
    catalog = loaded.matrix.catalog
    items = [PlannedGate(gate, key, policy[str(key)], log_proofs(catalog, key)) for key in rows]
    return await _run_items(loaded, recipes, recipe, items, evidence_root=evidence_root,
                            command=command, observe=observe, server_pid=server_pid,
                            agent=agent)  # fmt: skip


@dataclass(frozen=True, slots=True)
class GateBatch:
    results: list[GateResult]
    refused: dict[tuple[str, str], Exception]
    """(gate, row selector) pairs not run, with the usage error that says why."""


async def run_gate_batch(
    pairs: Sequence[tuple[str, str]],
    recipe_id: str,
    *,
    matrix: Path | None,
    evidence_root: Path,
    command: Sequence[str],
    observe: Observer = ignore,
) -> GateBatch:
    """Several (gate, row selector) pairs on one launch recipe's rows, in one run: a recipe is
    launched once for all of them, as a campaign launches it (the pytest plugin's gate × row
    items of one target). Every pair is checked before anything starts; a pair with a usage
    error (an unknown gate, bad params, no such row) is refused alone, the others still run."""
    project = find_project()
    loaded = load_project_matrix(matrix or project.matrices / DEFAULT_MATRIX)
    recipes = load_recipes(loaded.project.runners)
    recipe = recipes[recipe_id]
    items: dict[tuple[str, str], PlannedGate] = {}
    refused: dict[tuple[str, str], Exception] = {}
    for gate_id, row_selector in pairs:
        try:
            gate, selected = _selected_rows(loaded, recipes, gate_id, row_selector, recipe_id,
                                            False)  # fmt: skip
        except (ValueError, SpecError) as exc:
            refused[(gate_id, row_selector)] = exc
            continue
        for row in selected:
            proofs = log_proofs(loaded.matrix.catalog, row.key)
            items.setdefault((gate_id, str(row.key)),
                             PlannedGate(gate, row.key, row.spec.restart_policy, proofs))
    if not items:
        return GateBatch([], refused)
    if recipe.recipe.kind is RecipeKind.URL:
        assert recipe.recipe.url is not None  # a url recipe always has one (LaunchRecipe checks)
        await check_reachable(recipe.recipe.url)
    results = await _run_items(loaded, recipes, recipe, list(items.values()),
                               evidence_root=evidence_root, command=command, observe=observe,
                               server_pid=None)  # fmt: skip
    return GateBatch(results, refused)


def _selected_rows(
    loaded: ProjectMatrix, recipes: RecipeBook, gate_id: str, row_selector: str, target: str,
    is_url: bool,
) -> tuple[LoadedGate, list[PlannedRow]]:  # fmt: skip
    """The gate and the matrix rows it runs on for ``row_selector``, checked (usage errors)."""
    gate = _known_gate(loaded, gate_id)
    selector = Selector.parse(row_selector)
    for axis in selector.axes():
        if loaded.matrix.catalog.axis(axis) is None:
            raise ValueError(f"unknown axis {axis!r} in --row")
    selected = [
        row
        for row in loaded.matrix.rows
        if selector.matches(row.key)
        and gate.selector.matches(row.key)
        and (gate_id in wanted_gates(row.spec) or not gate.spec.decides_rows)
        and (is_url or row.spec.recipe == target)
    ]
    if not selected:
        raise ValueError(
            f"no matrix row matches --row {row_selector!r} for gate {gate_id!r} and target "
            f"{target!r} in {loaded.matrix.path}; see `omniqual matrix render "
            f"{loaded.matrix.path} --format md` for its rows, or name another with --matrix"
        )
    problems = [
        p
        for row in selected
        if row.spec.recipe is not None and row.spec.recipe in recipes
        for p in disagreements(loaded, recipes, row.spec.recipe, row.key, row.line)
    ]
    if problems:
        raise SpecError(problems)
    # Contracts and mappings are checked before the target is contacted.
    validate_before_contact(loaded, [PlannedGate(gate, row.key) for row in selected])
    return gate, selected


def _known_gate(loaded: ProjectMatrix, gate_id: str) -> LoadedGate:
    if gate_id not in loaded.gates:
        known = ", ".join(sorted(loaded.gates))
        raise ValueError(f"unknown gate {gate_id!r} (known: {known})")
    gate = loaded.gates[gate_id]
    check_params(gate)
    return gate


async def _run_items(
    loaded: ProjectMatrix, recipes: RecipeBook, recipe: LoadedRecipe, items: list[PlannedGate],
    *, evidence_root: Path, command: Sequence[str], observe: Observer, server_pid: int | None,
    agent: AgentAccess | None = None,
) -> list[GateResult]:  # fmt: skip
    on_harness = recipe.recipe.kind is not RecipeKind.URL or server_pid is not None
    host = HARNESS_HOST if on_harness else NOT_VISIBLE
    name = recipe.recipe.url or recipe.recipe.id
    if agent is not None:  # asked before anything runs: a wrong URL or token is a usage error
        host = (await agent_hosts({name: agent}))[name]
    environment = collect_fingerprint(target_hosts={name: host})
    writer = RunWriter.create(evidence_root, command=command, environment=environment)
    with writer:
        await run_plan([(recipe, items)], writer, root=loaded.project.root, command=command,
                       observe=observe, references=ReferenceBook.of(loaded, recipes),
                       server_pid=server_pid,
                       agents={recipe.recipe.id: agent} if agent is not None else None,
                       )  # fmt: skip
        return list(writer.results)


def rows_served_by(
    identity: ServedIdentity,
    loaded: ProjectMatrix,
    recipes: RecipeBook,
    *,
    selected_keys: Sequence[RowKey],
    gate: LoadedGate,
    row_selector: str,
) -> list[RowKey]:
    """The selected rows the deployment is; exactly one deployment's, or a usage error."""
    recipe_of = {str(row.key): row.spec.recipe for row in loaded.matrix.rows}
    verdicts: list[RowVerdict] = []
    for key in selected_keys:
        recipe_id = recipe_of.get(str(key))
        realized = (
            recipes[recipe_id].recipe if recipe_id is not None and recipe_id in recipes else None
        )
        expected = served_identity.expected_model(realized, key)
        verdicts.append(served_identity.judge_row(identity, key, recipe_id, realized, expected))
    fitting = [v for v in verdicts if v.reason is None]
    if not fitting:
        why = "; ".join(f"{v.row.get('model')} ({v.deployment}): {v.reason}"
                        for v in verdicts[:4])  # fmt: skip
        raise ValueError(
            f"{identity.describe()}: no row of {loaded.matrix.path} selected by --row "
            f"{row_selector!r} for gate {gate.spec.id!r} is that deployment, so nothing would "
            f"be recorded ({why})"
        )
    deployments = list(dict.fromkeys(v.deployment for v in fitting))
    if len(deployments) > 1:
        raise AmbiguousTarget(
            f"{identity.describe()}, which fits rows of {len(deployments)} deployments; a "
            "result lands only on the rows the deployment is, so say which one it is with "
            f"--row. Candidates:\n{_candidates(fitting, deployments)}"
        )
    return [v.row for v in fitting]


def _candidates(fitting: Sequence[RowVerdict], deployments: Sequence[str]) -> str:
    """Per deployment, the ``--row`` that picks it: the axes on which the candidates differ."""
    varying = [
        axis
        for axis, _ in fitting[0].row.items
        if len({v.row.get(axis) for v in fitting}) > 1
        and len({(v.deployment, v.row.get(axis)) for v in fitting}) == len(deployments)
    ] or [axis for axis, _ in fitting[0].row.items]
    lines = []
    for deployment in deployments:
        rows = [v.row for v in fitting if v.deployment == deployment]
        pick = ",".join(f"{axis}={rows[0].get(axis)}" for axis in varying)
        lines.append(
            f"  {deployment} ({len(rows)} row{'s' if len(rows) > 1 else ''}): --row {pick}"
        )
    return "\n".join(lines)


def check_server_pid(pid: int, *, is_url: bool) -> None:
    """A named server process must be a URL deployment's, and alive on this host."""
    if not is_url:
        raise ValueError("--server-pid names the process of a deployment given by URL; "
                         "a launched recipe's process is known already")  # fmt: skip
    if not psutil.pid_exists(pid):
        raise ValueError(f"--server-pid {pid}: no such process on this host")


def check_agent(agent: AgentAccess, *, is_url: bool, server_pid: int | None) -> None:
    """An agent reads a URL deployment's process tree on its own host: not a launched
    recipe's (known already), and not beside ``--server-pid`` (one source of readings)."""
    if not is_url:
        raise ValueError("--agent observes a deployment given by URL on another host; a "
                         "launched recipe's process is observed on this host already")  # fmt: skip
    if server_pid is not None:
        raise ValueError("--agent and --server-pid both name the server's process: give one "
                         "(--server-pid on this host, --agent on another)")  # fmt: skip
