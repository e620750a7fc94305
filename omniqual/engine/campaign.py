"""Run a campaign: for each launch recipe, bring the target up, run its rows' gates, record each
result as it happens, take the target down; then compile the matrix and render the reports.

A killed campaign resumes from its journal: results already recorded (anything but a harness
fault) are not redone."""

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from omniqual.checks.base import LaunchAttempt, PointLaunch, TargetInfo
from omniqual.checks.registry import resolve
from omniqual.client.client import OmniClient
from omniqual.deploy.fingerprint import collect_fingerprint
from omniqual.deploy.launcher import LaunchError, StartupOutcome, launch, stop
from omniqual.deploy.server_log import log_tail
from omniqual.domain.matrix import CompiledMatrix
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.provenance import HARNESS_HOST, NOT_VISIBLE, Provenance
from omniqual.domain.recipe import LaunchRecipe, RecipeKind
from omniqual.domain.result import GateResult
from omniqual.engine.events import (
    GateSkippedAsDone,
    Observer,
    TargetLost,
    TargetReady,
    TargetStarting,
    ignore,
)
from omniqual.engine.gate_runner import GateJob, run_gate
from omniqual.engine.matrix_service import compile_from_dirs, load_project_matrix
from omniqual.engine.plan import PlannedGate, done_keys, is_done, make_plan
from omniqual.engine.preflight import validate_before_contact
from omniqual.engine.references import ReferenceBook, ReferencePool
from omniqual.engine.store import RunWriter
from omniqual.engine.targets import (
    PreparedModel,
    answers_health,
    attempt_launch,
    check_serves_rows,
    prepare_model,
    served,
    store_log,
)
from omniqual.specs.campaign import LoadedCampaign
from omniqual.specs.recipes import LoadedRecipe, load_recipes


@dataclass(frozen=True, slots=True)
class CampaignOutcome:
    run_dir: Path
    results: tuple[GateResult, ...]
    skipped_as_done: int
    compiled: CompiledMatrix
    unplanned_rows: tuple[str, ...]

    def worst(self) -> GateOutcome | None:
        order = [GateOutcome.ERRORED, GateOutcome.FAILED, GateOutcome.INVALID]
        outcomes = {r.outcome for r in self.results}
        return next((o for o in order if o in outcomes), None)


def base_provenance() -> Provenance:
    fingerprint = collect_fingerprint()
    return Provenance(
        omniqual_version=fingerprint.omniqual_version, omniqual_commit=fingerprint.git_commit
    )


async def run_campaign(
    loaded: LoadedCampaign,
    *,
    command: Sequence[str],
    resume: Path | None = None,
    observe: Observer = ignore,
) -> CampaignOutcome:
    project_matrix = load_project_matrix(loaded.matrix_path)
    recipes = load_recipes(project_matrix.project.runners)
    plan = make_plan(project_matrix, recipes, loaded.selector, loaded.campaign.gates)
    # Every spec problem (params, contracts, load mappings) surfaces before anything is launched.
    validate_before_contact(project_matrix, [item for w in plan.work for item in w.items])
    work = [(recipes[w.recipe_id], list(w.items)) for w in plan.work]
    if resume is not None:
        writer = RunWriter.resume(resume)
    else:
        hosts = target_hosts([r for r, _ in work], loaded.campaign.targets)
        environment = collect_fingerprint(target_hosts=hosts)
        writer = RunWriter.create(loaded.evidence_root, command=command, environment=environment)
    with writer:
        skipped = await run_plan(
            work, writer, root=project_matrix.project.root, command=command, observe=observe,
            seed=loaded.campaign.seed, urls=loaded.campaign.targets,
            references=ReferenceBook.of(project_matrix, recipes),
        )  # fmt: skip
        results = writer.results
    compiled = compile_from_dirs(project_matrix, [loaded.evidence_root], None)
    return CampaignOutcome(writer.run_dir, results, skipped, compiled, plan.unplanned_rows)


def target_hosts(recipes: Sequence[LoadedRecipe], urls: Mapping[str, str] | None) -> dict[str, str]:
    """Per target of a run: launched on the harness host, or a URL whose host it cannot see."""
    return {
        r.recipe.id: NOT_VISIBLE
        if r.recipe.kind is RecipeKind.URL or r.recipe.id in (urls or {})
        else HARNESS_HOST
        for r in recipes
    }


async def run_plan(
    work: Sequence[tuple[LoadedRecipe, list[PlannedGate]]],
    writer: RunWriter,
    *,
    root: Path,
    command: Sequence[str],
    observe: Observer = ignore,
    seed: int = 0,
    urls: Mapping[str, str] | None = None,
    references: ReferenceBook | None = None,
    server_pid: int | None = None,
) -> int:
    """Run every planned gate not already in ``writer``'s journal; return how many were skipped.
    With ``references``, a check may have another row's deployment served as its baseline.
    ``server_pid`` is the process of a URL deployment on this host, when the user names it."""
    done = done_keys(writer.results)
    skipped = 0
    base = base_provenance()
    async with ReferencePool(references or ReferenceBook({}), writer, base, urls) as pool:
        for recipe, items in work:
            todo = [item for item in items if not is_done(item, done)]
            for item in items:
                if is_done(item, done):
                    skipped += 1
                    observe(GateSkippedAsDone(item.gate.spec.id, str(item.row)))
            if todo:
                url = (urls or {}).get(recipe.recipe.id)
                await _run_recipe(recipe, todo, writer, url, base, root, command, observe, seed,
                                  pool, server_pid=server_pid)  # fmt: skip
    return skipped


async def _run_recipe(
    recipe: LoadedRecipe,
    items: list[PlannedGate],
    writer: RunWriter,
    url: str | None,
    base: Provenance,
    root: Path,
    command: Sequence[str],
    observe: Observer,
    seed: int,
    pool: ReferencePool,
    *,
    server_pid: int | None = None,
) -> None:
    prepared = prepare_model(recipe.recipe, base, recipe.directory)
    needs = {item.gate.spec.id: resolve(item.gate.spec.kind).needs for item in items}
    offline = [i for i in items if needs[i.gate.spec.id] != "server"]
    online = [i for i in items if needs[i.gate.spec.id] == "server"]
    for item in offline:
        await _run_item(item, recipe, prepared, writer, root, command, observe, url=None)
    if not online:
        return
    launched = url is None and recipe.recipe.kind is not RecipeKind.URL
    remaining = list(online)
    while remaining:
        if launched:
            observe(TargetStarting(recipe.recipe.id))  # a URL target is used, never started
        async with served(recipe, prepared, writer, url, pid=server_pid) as target:
            if target.identity is not None:
                check_serves_rows(target.identity, recipe.recipe, [i.row for i in remaining])
            observe(TargetReady(recipe.recipe.id, target.info.url or "", 0.0))
            while remaining:
                item = remaining.pop(0)
                job = GateJob(item.gate, item.row, target.info, target.provenance)
                await run_gate(job, writer, project_root=root, command=command, observe=observe,
                               seed=seed, serve_reference=pool.serve)  # fmt: skip
                # A server the gate crashed is that gate's finding; the next gate gets a fresh
                # launch instead of a column of unreachable errors. A URL is never relaunched.
                if remaining and launched and not await answers_health(target.info.url):
                    observe(TargetLost(recipe.recipe.id, item.gate.spec.id, str(item.row)))
                    break


async def _run_item(
    item: PlannedGate,
    recipe: LoadedRecipe,
    prepared: PreparedModel,
    writer: RunWriter,
    root: Path,
    command: Sequence[str],
    observe: Observer,
    url: str | None,
) -> GateResult:
    target = TargetInfo(url=url, recipe=recipe.recipe, checkpoint_dir=prepared.checkpoint_dir,
                        label=recipe.recipe.id)  # fmt: skip

    async def launch_once(given: LaunchRecipe) -> LaunchAttempt:
        # The check may bound the recipe (e.g. a readiness deadline near its own deadline).
        bounded = LoadedRecipe(given, recipe.path, recipe.line)
        return await attempt_launch(bounded, prepared, writer)

    def serve_point(given: LaunchRecipe) -> AbstractAsyncContextManager[PointLaunch]:
        return launched_point(LoadedRecipe(given, recipe.path, recipe.line), prepared, writer)

    job = GateJob(item.gate, item.row, target, prepared.provenance)
    return await run_gate(job, writer, project_root=root, command=command,
                          launch_expecting_failure=launch_once, serve_point=serve_point,
                          observe=observe)  # fmt: skip


@asynccontextmanager
async def launched_point(
    loaded: LoadedRecipe, prepared: PreparedModel, writer: RunWriter
) -> AsyncIterator[PointLaunch]:
    """A derived recipe (a sweep point) launched for the block and stopped after it. A refusal
    or a hang past the recipe's readiness deadline is yielded as data with its log."""
    recipe = loaded.recipe
    log_path = writer.run_dir / "logs" / f"{recipe.id}-point.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        target = await asyncio.to_thread(
            launch, recipe, model=prepared.model, log_path=log_path, recipe_dir=loaded.directory,
            name=f"point-{writer.run_id}-{recipe.id}",
        )  # fmt: skip
    except LaunchError as exc:
        if exc.reason not in ("exited", "timeout"):
            raise  # a port in use or a missing command says nothing about the point
        startup = StartupOutcome(
            recipe_id=recipe.id, expected=recipe.expect, became_ready=False, reason=exc.reason,
            exit_code=exc.exit_code, elapsed_s=exc.elapsed_s, log_path=exc.log_path,
            log_tail=exc.log_tail, command=exc.command, expected_error_matched=None,
        )  # fmt: skip
        yield PointLaunch(startup, None, store_log(writer, exc.log_path, f"{recipe.id} log"))
        return
    try:
        startup = StartupOutcome(
            recipe_id=recipe.id, expected=recipe.expect, became_ready=True, reason="ready",
            exit_code=None, elapsed_s=target.time_to_ready_s, log_path=target.log_path,
            log_tail=log_tail(target.log_path), command=target.command,
            expected_error_matched=None,
        )  # fmt: skip
        info = TargetInfo(url=target.url, recipe=recipe, pid=target.pid,
                          checkpoint_dir=prepared.checkpoint_dir, log_path=target.log_path,
                          label=f"{recipe.id} @ {target.url}")  # fmt: skip
        url = target.url
        yield PointLaunch(startup, info, store_log(writer, target.log_path, f"{recipe.id} log"),
                          lambda: OmniClient(url))  # fmt: skip
    finally:
        await asyncio.to_thread(stop, target)
