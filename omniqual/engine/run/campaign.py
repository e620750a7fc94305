"""Run a campaign: for each launch recipe, bring the target up, run its rows' gates, record each
result as it happens, take the target down; then compile the matrix and render the reports.

A killed campaign resumes from its journal: results already recorded (anything but a harness
fault) are not redone."""

import asyncio
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from omniqual.checks.base import LaunchAttempt, PointLaunch, TargetInfo
from omniqual.checks.registry import resolve
from omniqual.client.client import OmniClient
from omniqual.deploy.agent.client import AgentAccess
from omniqual.deploy.fingerprint import collect_fingerprint
from omniqual.deploy.launcher import LaunchError, StartupOutcome, launch, stop
from omniqual.deploy.server_log import log_tail
from omniqual.domain.matrix import CompiledMatrix
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.provenance import HARNESS_HOST, NOT_VISIBLE, Provenance
from omniqual.domain.recipe import LaunchRecipe, RecipeKind
from omniqual.domain.result import GateResult
from omniqual.engine.matrix_service import compile_from_dirs, load_project_matrix
from omniqual.engine.run import timing
from omniqual.engine.run.campaign_scope import RowReach, mark_left_out, rows_reached
from omniqual.engine.run.events import (
    EngineEvent,
    Observer,
    TargetLost,
    TargetReady,
    TargetStarting,
    ignore,
)
from omniqual.engine.run.gate_runner import GateJob, run_gate
from omniqual.engine.run.host_share import activity, given_devices, launch_env, off_loop, start_up
from omniqual.engine.run.plan import PlannedGate, done_keys, launch_groups, make_plan
from omniqual.engine.run.planned import plan_ready
from omniqual.engine.run.preflight import validate_before_contact
from omniqual.engine.run.resources import Jobs
from omniqual.engine.run.scheduler import LaunchGroup, lanes, pending_groups, run_groups
from omniqual.engine.targets.agents import agent_hosts, check_agent_targets
from omniqual.engine.targets.references import ReferenceBook, ReferencePool
from omniqual.engine.targets.targets import (
    PreparedModel,
    ServedTarget,
    answers_health,
    attempt_launch,
    check_serves_rows,
    prepare_model,
    served,
    store_deploy_configs,
    store_log,
)
from omniqual.evidence.store import RunWriter
from omniqual.specs.campaign import LoadedCampaign
from omniqual.specs.recipes import LoadedRecipe, load_recipes


@dataclass(frozen=True, slots=True)
class CampaignOutcome:
    run_dir: Path
    results: tuple[GateResult, ...]
    skipped_as_done: int
    compiled: CompiledMatrix
    unplanned_rows: tuple[str, ...]
    reached: tuple[RowReach, ...] = ()
    """The rows the plan ran gates on: qualified in full or only sampled (the report says)."""

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
    jobs: Jobs = 1,
    agents: Mapping[str, AgentAccess] | None = None,
) -> CampaignOutcome:
    """``agents``: per recipe served by URL (the campaign's ``targets`` or a URL recipe), the
    ``omniqual agent`` beside that server that reads its process tree for abort and soak."""
    project_matrix = load_project_matrix(loaded.matrix_path)
    recipes = load_recipes(project_matrix.project.runners)
    plan = make_plan(
        project_matrix, recipes, loaded.selector, loaded.campaign.gates, loaded.parts
    )
    # Every spec problem (params, contracts, load mappings) surfaces before anything is launched.
    validate_before_contact(project_matrix, [item for w in plan.work for item in w.items])
    work = [(recipes[w.recipe_id], list(w.items)) for w in plan.work]
    check_agent_targets(agents or {}, [r for r, _ in work], loaded.campaign.targets)
    seen_hosts = await agent_hosts(agents or {})
    if resume is not None:
        writer = RunWriter.resume(resume)
    else:
        hosts = target_hosts([r for r, _ in work], loaded.campaign.targets) | seen_hosts
        environment = collect_fingerprint(target_hosts=hosts)
        writer = RunWriter.create(loaded.evidence_root, command=command, environment=environment)
    with writer:
        skipped = await run_plan(
            work, writer, root=project_matrix.project.root, command=command, observe=observe,
            seed=loaded.campaign.seed, urls=loaded.campaign.targets,
            references=ReferenceBook.of(project_matrix, recipes), jobs=jobs, agents=agents,
        )  # fmt: skip
        results = writer.results
    compiled = compile_from_dirs(project_matrix, [loaded.evidence_root], None)
    full = loaded.full_campaign_path
    full_name = None
    if full is not None:  # said from where the command ran, unless that is outside it
        full_name = os.path.relpath(full, Path.cwd())
        full_name = full.name if full_name.startswith("..") else full_name
    compiled = mark_left_out(compiled, plan.left_out, full_name)
    return CampaignOutcome(writer.run_dir, results, skipped, compiled, plan.unplanned_rows,
                           rows_reached(plan, project_matrix))  # fmt: skip


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
    agents: Mapping[str, AgentAccess] | None = None,
    jobs: Jobs = 1,
) -> int:
    """Run every planned gate not already in ``writer``'s journal; return how many were skipped.
    With ``references``, a check may have another row's deployment served as its baseline.
    ``server_pid`` is the process of a URL deployment on this host, when the user names it;
    ``agents`` (recipe id -> agent) read the process trees of URL deployments on other hosts.

    Recipes whose serve configurations normalize to the same one share one launch; ``jobs``
    launch groups run at once (``auto``: as many as the host holds; see the scheduler). Where
    the time went (start-ups, gates) is written to the run as ``timing.json``."""
    done = done_keys(writer.results)
    set_aside: list[EngineEvent] = []  # told after the plan, which needs the groups first
    groups, skipped = pending_groups(work, urls, done, set_aside.append)
    observe(plan_ready(work, launch_groups([recipe for recipe, _ in work], urls), done, urls,
                       min(lanes(groups, jobs), max(1, len(groups)))))  # fmt: skip
    for event in set_aside:
        observe(event)
    base = base_provenance()
    book = references or ReferenceBook({})
    recorder = timing.TimingRecorder(writer.run_id)
    with timing.recording(recorder):
        async with ReferencePool(book, writer, base, urls) as pool:

            async def run_group(group: LaunchGroup) -> None:
                async with AsyncExitStack() as stack:
                    own = pool
                    # A group given GPUs serves its reference on them, and it ends with the
                    # group; on a host without GPUs one reference serves every group.
                    if given_devices():
                        tagged = ReferencePool(book, writer, base, urls, tag=group.lead.recipe.id)
                        own = await stack.enter_async_context(tagged)
                    run = _GroupRun(writer, base, root, command, observe, seed, own, server_pid,
                                    dict(agents or {}))  # fmt: skip
                    await run.group(group.members, group.url)

            await run_groups(groups, run_group, jobs=jobs)
        timing.write_timing(writer, recorder.snapshot())
    return skipped


@dataclass(frozen=True, slots=True)
class _GroupRun:
    writer: RunWriter
    base: Provenance
    root: Path
    command: Sequence[str]
    observe: Observer
    seed: int
    pool: ReferencePool
    server_pid: int | None
    agents: Mapping[str, AgentAccess]

    async def group(self, members: list[tuple[LoadedRecipe, list[PlannedGate]]],
                    url: str | None) -> None:  # fmt: skip
        """One launch (of the first member's recipe) serves every member's online gates."""
        prepared = await off_loop(lambda: {
            r.recipe.id: prepare_model(r.recipe, self.base, r.directory) for r, _ in members
        }, "preparation")  # fmt: skip
        beside: list[tuple[LoadedRecipe, PlannedGate]] = []
        online: list[tuple[LoadedRecipe, PlannedGate]] = []
        for recipe, items in members:
            for item in items:
                needs = resolve(item.gate.spec.kind).needs
                if needs == "server":
                    online.append((recipe, item))
                elif needs == "checkpoint":
                    beside.append((recipe, item))
                else:  # a gate that launches on its own (sweep, refusal) runs alone: it measures
                    await self.offline(recipe, prepared[recipe.recipe.id], item)
        lead = members[0][0]
        launched = url is None and lead.recipe.kind is not RecipeKind.URL
        if not online or not launched:
            # Nothing to overlap with: checkpoint-only gates run on their own.
            for recipe, item in beside:
                await self.offline(recipe, prepared[recipe.recipe.id], item)
            beside = []
        if online:
            await self.online(lead, prepared, online, beside, url, launched)

    async def offline(self, recipe: LoadedRecipe, prepared: PreparedModel, item: PlannedGate,
                      overlapped_with: str | None = None) -> GateResult:  # fmt: skip
        result = await _run_item(item, recipe, prepared, self.writer, self.root, self.command,
                                 self.observe, url=None)  # fmt: skip
        recorder = timing.current()
        if recorder is not None:
            recorder.gate(result, recipe.recipe.id, overlapped_with)
        return result

    async def online(
        self, lead: LoadedRecipe, prepared: Mapping[str, PreparedModel],
        remaining: list[tuple[LoadedRecipe, PlannedGate]],
        beside: list[tuple[LoadedRecipe, PlannedGate]], url: str | None, launched: bool,
    ) -> None:  # fmt: skip
        while remaining:
            if launched:
                self.observe(TargetStarting(lead.recipe.id))  # a URL target is used, never started
            # Checkpoint-only gates (e.g. a meta-device build in a subprocess) run while
            # the server starts: nothing is being measured yet. They finish before any gate
            # that talks to the server begins.
            side = (asyncio.ensure_future(self._beside(beside, prepared, lead.recipe.id))
                    if beside else None)  # fmt: skip
            beside = []
            try:
                async with served(lead, prepared[lead.recipe.id], self.writer, url,
                                  pid=self.server_pid,
                                  agent=self.agents.get(lead.recipe.id)) as target:  # fmt: skip
                    if side is not None:
                        await side
                    await self._serve(lead, prepared, target, remaining, launched)
            finally:
                if side is not None and not side.done():
                    await side

    async def _beside(self, items: list[tuple[LoadedRecipe, PlannedGate]],
                      prepared: Mapping[str, PreparedModel], lead: str) -> None:  # fmt: skip
        for recipe, item in items:
            await self.offline(recipe, prepared[recipe.recipe.id], item,
                               overlapped_with=f"start-up of {lead}")  # fmt: skip

    async def _serve(
        self, lead: LoadedRecipe, prepared: Mapping[str, PreparedModel], target: ServedTarget,
        remaining: list[tuple[LoadedRecipe, PlannedGate]], launched: bool,
    ) -> None:  # fmt: skip
        if target.identity is not None:
            check_serves_rows(target.identity, lead.recipe, [i.row for _, i in remaining])
        self.observe(TargetReady(lead.recipe.id, target.info.url or "", target.startup_s))
        while remaining:
            recipe, item = remaining.pop(0)
            info, provenance = target.info, target.provenance
            if recipe.recipe.id != lead.recipe.id:
                # Same normalized serve configuration: this launch is that recipe's deployment.
                info = replace(info, recipe=recipe.recipe,
                               label=f"{recipe.recipe.id} @ {info.url} (one launch with "
                                     f"{lead.recipe.id})")  # fmt: skip
                provenance = prepared[recipe.recipe.id].provenance.model_copy(
                    update={"serve_argv": target.provenance.serve_argv}
                )
            job = GateJob(item.gate, item.row, info, provenance, artifacts=target.configs,
                          restart_policy=item.restart_policy, log_proofs=item.log_proofs)
            result = await run_gate(job, self.writer, project_root=self.root,
                                    command=self.command, observe=self.observe, seed=self.seed,
                                    serve_reference=self.pool.serve)  # fmt: skip
            recorder = timing.current()
            if recorder is not None:
                recorder.gate(result, recipe.recipe.id)
                if recipe.recipe.id != lead.recipe.id:
                    recorder.reused_by(lead.recipe.id)
            # A server the gate crashed is that gate's finding; the next gate gets a fresh
            # launch instead of a column of unreachable errors. A URL is never relaunched.
            if remaining and launched and not await self._healthy(lead.recipe.id, target):
                self.observe(TargetLost(lead.recipe.id, item.gate.spec.id, str(item.row)))
                return


    @staticmethod
    async def _healthy(recipe: str, target: ServedTarget) -> bool:
        # A shared activity: while another group's gate measures, this server is paused, and
        # its health is asked once that gate gave the host up (its answer, not a timeout).
        async with activity("health check", recipe=recipe):
            return await answers_health(target.info.url)


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

    job = GateJob(item.gate, item.row, target, prepared.provenance,
                  restart_policy=item.restart_policy, log_proofs=item.log_proofs)
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
    handle = timing.launch_started(recipe.id, "point")
    try:
        # Part of its gate; a measuring gate whose kind shares its start-ups runs it beside the
        # other groups' work and has the host to itself again when this block ends.
        async with start_up(recipe.id):
            target = await asyncio.to_thread(
                launch, recipe, model=prepared.model, log_path=log_path,
                recipe_dir=loaded.directory, name=f"point-{writer.run_id}-{recipe.id}",
                extra_env=launch_env(),
            )  # fmt: skip
    except LaunchError as exc:
        timing.launch_ended(handle, exc.elapsed_s, ready=False)
        timing.launch_stopped(handle)
        if exc.reason not in ("exited", "timeout"):
            raise  # a port in use or a missing command says nothing about the point
        startup = StartupOutcome(
            recipe_id=recipe.id, expected=recipe.expect, became_ready=False, reason=exc.reason,
            exit_code=exc.exit_code, elapsed_s=exc.elapsed_s, log_path=exc.log_path,
            log_tail=exc.log_tail, command=exc.command, expected_error_matched=None,
        )  # fmt: skip
        yield PointLaunch(startup, None, store_log(writer, exc.log_path, f"{recipe.id} log"),
                          configs=store_deploy_configs(writer, exc.command))  # fmt: skip
        return
    timing.launch_ended(handle, target.time_to_ready_s, ready=True)
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
                          lambda: OmniClient(url),
                          configs=store_deploy_configs(writer, target.command))  # fmt: skip
    finally:
        await asyncio.to_thread(stop, target)
        timing.launch_stopped(handle)
