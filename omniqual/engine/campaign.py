"""Run a campaign: for each launch recipe, bring the target up, run its rows' gates, record each
result as it happens, take the target down; then compile the matrix and render the reports.

A killed campaign resumes from its journal: results already recorded (anything but a harness
fault) are not redone. How one launch group runs, and what may overlap what, is
:mod:`omniqual.engine.group_run`."""

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from omniqual.deploy.fingerprint import collect_fingerprint
from omniqual.domain.matrix import CompiledMatrix
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.provenance import HARNESS_HOST, NOT_VISIBLE, Provenance
from omniqual.domain.recipe import RecipeKind
from omniqual.domain.result import GateResult
from omniqual.engine import timing
from omniqual.engine.events import GateSkippedAsDone, Observer, ignore
from omniqual.engine.group_run import GroupRun, Launching, Members, launched_point
from omniqual.engine.matrix_service import compile_from_dirs, load_project_matrix
from omniqual.engine.plan import PlannedGate, done_keys, is_done, launch_groups, make_plan
from omniqual.engine.preflight import validate_before_contact
from omniqual.engine.references import ReferenceBook, ReferencePool
from omniqual.engine.store import RunWriter
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
    ``server_pid`` is the process of a URL deployment on this host, when the user names it.

    Recipes whose serve configurations normalize to the same one share one launch. Where the
    time went (start-ups, gates) is written to the run as ``timing.json``."""
    done = done_keys(writer.results)
    skipped = 0
    base = base_provenance()
    recorder = timing.TimingRecorder(writer.run_id)
    with timing.recording(recorder):
        groups: list[tuple[Members, str | None]] = []
        for group in launch_groups([recipe for recipe, _ in work], urls):
            members: Members = []
            for position in group:
                recipe, items = work[position]
                for item in items:
                    if is_done(item, done):
                        skipped += 1
                        observe(GateSkippedAsDone(item.gate.spec.id, str(item.row)))
                todo = [item for item in items if not is_done(item, done)]
                if todo:
                    members.append((recipe, todo))
            if members:
                groups.append((members, (urls or {}).get(members[0][0].recipe.id)))
        async with ReferencePool(references or ReferenceBook({}), writer, base, urls) as pool:
            run = GroupRun(writer, base, root, command, observe, seed, pool, server_pid)
            await _run_groups(run, groups)
        timing.write_timing(writer, recorder.snapshot())
    return skipped


async def _run_groups(run: GroupRun, groups: Sequence[tuple[Members, str | None]]) -> None:
    """The groups in order; the next one's start-up may begin once the current group's
    measuring gates are done (:mod:`omniqual.engine.group_run`)."""
    ahead: list[Launching] = []  # at most one: the next group's launch, begun early

    def begin_next(position: int) -> None:
        following = position + 1
        if ahead or following >= len(groups):
            return
        members, url = groups[following]
        if GroupRun.may_begin_early(members, url):
            _, beside, _ = GroupRun.split(members)
            ahead.append(run.begin(members, url, beside))

    try:
        for position, (members, url) in enumerate(groups):
            mine = ahead.pop() if ahead else None
            await run.group(members, url, mine, functools.partial(begin_next, position))
    finally:
        for launching in ahead:
            await launching.close()

__all__ = ["CampaignOutcome", "base_provenance", "launched_point", "run_campaign", "run_plan",
           "target_hosts"]
