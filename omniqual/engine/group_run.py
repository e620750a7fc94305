"""One launch group of a run: its gates that launch on their own, then one launch serving every
member's online gates.

What may share the host with what (issue 12, "overlap only what cannot perturb a measurement"):

* gates that launch on their own (offload sweep points, refusals) time start-ups and measure
  memory and latency: they run alone, before the group's own launch;
* checkpoint-only gates (strict-load) run beside the group's start-up: nothing is measured yet;
* on the served target, the gates whose verdict rests on timing or CPU figures
  (:func:`omniqual.checks.base.measures`: soak, abort, a refusal deadline) run first; once they
  are done the group calls ``on_measured``, and the run may begin the *next* group's start-up
  (:class:`Launching`) while this group's functional gates (contract, parity) finish. A group
  is begun early only when it has no gate that launches on its own.
"""

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from omniqual.checks.base import LaunchAttempt, PointLaunch, TargetInfo, measures
from omniqual.checks.registry import resolve
from omniqual.client.client import OmniClient
from omniqual.deploy.launcher import LaunchError, StartupOutcome, launch, stop
from omniqual.deploy.server_log import log_tail
from omniqual.domain.provenance import Provenance
from omniqual.domain.recipe import LaunchRecipe, RecipeKind
from omniqual.domain.result import GateResult
from omniqual.engine import timing
from omniqual.engine.events import Observer, TargetLost, TargetReady, TargetStarting
from omniqual.engine.gate_runner import GateJob, run_gate
from omniqual.engine.plan import PlannedGate
from omniqual.engine.references import ReferencePool
from omniqual.engine.store import RunWriter
from omniqual.engine.targets import (
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
from omniqual.specs.recipes import LoadedRecipe

Members = list[tuple[LoadedRecipe, list[PlannedGate]]]
Item = tuple[LoadedRecipe, PlannedGate]


@dataclass(slots=True)
class Launching:
    """A group's launch in progress, held open by a task until :meth:`close`, with the group's
    checkpoint-only gates beside it: begun ahead by the run, or by the group itself."""

    lead: LoadedRecipe
    prepared: dict[str, PreparedModel]
    target: "asyncio.Future[ServedTarget]"
    release: asyncio.Event = field(default_factory=asyncio.Event)
    hold: "asyncio.Task[None] | None" = None
    side: "asyncio.Task[None] | None" = None

    async def close(self) -> None:
        """Stop the server (if it came up) and let the beside gates end; re-raise what failed
        there (a failed launch is raised where ``target`` is awaited instead)."""
        self.release.set()
        tasks = [t for t in (self.hold, self.side) if t is not None]
        for outcome in await asyncio.gather(*tasks, return_exceptions=True):
            if isinstance(outcome, BaseException) and not isinstance(
                outcome, asyncio.CancelledError
            ):
                raise outcome


@dataclass(frozen=True, slots=True)
class GroupRun:
    writer: RunWriter
    base: Provenance
    root: Path
    command: Sequence[str]
    observe: Observer
    seed: int
    pool: ReferencePool
    server_pid: int | None

    @staticmethod
    def split(members: Members) -> tuple[list[Item], list[Item], list[Item]]:
        """(gates that launch on their own, checkpoint-only gates, served gates)."""
        buckets: dict[str, list[Item]] = {"launches": [], "checkpoint": [], "server": []}
        for recipe, items in members:
            for item in items:
                buckets[resolve(item.gate.spec.kind).needs].append((recipe, item))
        return buckets["launches"], buckets["checkpoint"], buckets["server"]

    @classmethod
    def may_begin_early(cls, members: Members, url: str | None) -> bool:
        launching, _, online = cls.split(members)
        lead = members[0][0].recipe
        return bool(online) and not launching and url is None and lead.kind is not RecipeKind.URL

    def begin(self, members: Members, url: str | None, beside: list[Item],
              prepared: dict[str, PreparedModel] | None = None) -> Launching:  # fmt: skip
        """Start the group's launch now, with ``beside`` (checkpoint-only gates) alongside it.
        Without ``prepared``, the members' checkpoints are prepared first, off the loop (the
        run begins a group early while another group's gates are running)."""
        lead = members[0][0]
        launching = Launching(lead, prepared or {}, asyncio.get_running_loop().create_future())
        if url is None and lead.recipe.kind is not RecipeKind.URL:
            self.observe(TargetStarting(lead.recipe.id))  # a URL target is used, never started

        async def hold() -> None:
            try:
                if prepared is None:
                    for recipe, _ in members:
                        launching.prepared[recipe.recipe.id] = await asyncio.to_thread(
                            prepare_model, recipe.recipe, self.base, recipe.directory)  # fmt: skip
                if beside:
                    launching.side = asyncio.ensure_future(
                        self._beside(beside, launching.prepared, lead.recipe.id))  # fmt: skip
                async with served(lead, launching.prepared[lead.recipe.id], self.writer, url,
                                  pid=self.server_pid) as target:  # fmt: skip
                    launching.target.set_result(target)
                    await launching.release.wait()
            except BaseException as exc:
                if not launching.target.done():
                    launching.target.set_exception(exc)
                    return  # raised where the target is awaited
                raise

        launching.hold = asyncio.ensure_future(hold())
        return launching

    async def group(self, members: Members, url: str | None, ahead: Launching | None,
                    on_measured: Callable[[], None]) -> None:  # fmt: skip
        """Run the group; ``ahead`` is its launch if the run began it early. ``on_measured`` is
        called once no measuring gate of the group is left to run (maybe more than once)."""
        launching, beside, online = self.split(members)
        if ahead is not None:
            prepared, beside = ahead.prepared, []  # the early launch took its beside gates
        else:
            prepared = {
                r.recipe.id: prepare_model(r.recipe, self.base, r.directory) for r, _ in members
            }
            for recipe, item in launching:  # they measure: alone, before the group's launch
                await self.offline(recipe, prepared[recipe.recipe.id], item)
        lead = members[0][0]
        launched = url is None and lead.recipe.kind is not RecipeKind.URL
        if not online or not launched:
            for recipe, item in beside:  # nothing to overlap with
                await self.offline(recipe, prepared[recipe.recipe.id], item)
            beside = []
        # Measuring gates first, so the rest of the group may overlap the next start-up.
        remaining = sorted(online, key=lambda ri: not measures(resolve(ri[1].gate.spec.kind)))
        current = ahead
        while remaining:
            if current is None:  # the group's own launch, or a relaunch after a lost target
                current, beside = self.begin(members, url, beside, prepared), []
            try:
                target = await current.target
                if current.side is not None:
                    await current.side  # checkpoint-only gates end before any served gate
                await self._serve(lead, prepared, target, remaining, launched,
                                  on_measured)  # fmt: skip
            finally:
                closing, current = current, None
                await closing.close()
        on_measured()

    async def offline(self, recipe: LoadedRecipe, prepared: PreparedModel, item: PlannedGate,
                      overlapped_with: str | None = None) -> GateResult:  # fmt: skip
        result = await run_item(item, recipe, prepared, self.writer, self.root, self.command,
                                self.observe)  # fmt: skip
        recorder = timing.current()
        if recorder is not None:
            recorder.gate(result, recipe.recipe.id, overlapped_with)
        return result

    async def _beside(self, items: list[Item], prepared: Mapping[str, PreparedModel],
                      lead: str) -> None:  # fmt: skip
        for recipe, item in items:
            await self.offline(recipe, prepared[recipe.recipe.id], item,
                               overlapped_with=f"start-up of {lead}")  # fmt: skip

    async def _serve(
        self, lead: LoadedRecipe, prepared: Mapping[str, PreparedModel], target: ServedTarget,
        remaining: list[Item], launched: bool, on_measured: Callable[[], None],
    ) -> None:  # fmt: skip
        if target.identity is not None:
            check_serves_rows(target.identity, lead.recipe, [i.row for _, i in remaining])
        self.observe(TargetReady(lead.recipe.id, target.info.url or "", 0.0))
        while remaining:
            recipe, item = remaining.pop(0)
            if not measures(resolve(item.gate.spec.kind)):
                on_measured()
            info, provenance = target.info, target.provenance
            if recipe.recipe.id != lead.recipe.id:
                # Same normalized serve configuration: this launch is that recipe's deployment.
                info = replace(info, recipe=recipe.recipe,
                               label=f"{recipe.recipe.id} @ {info.url} (one launch with "
                                     f"{lead.recipe.id})")  # fmt: skip
                provenance = prepared[recipe.recipe.id].provenance.model_copy(
                    update={"serve_argv": target.provenance.serve_argv}
                )
            job = GateJob(item.gate, item.row, info, provenance, artifacts=target.configs)
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
            if remaining and launched and not await answers_health(target.info.url):
                self.observe(TargetLost(lead.recipe.id, item.gate.spec.id, str(item.row)))
                return


async def run_item(
    item: PlannedGate,
    recipe: LoadedRecipe,
    prepared: PreparedModel,
    writer: RunWriter,
    root: Path,
    command: Sequence[str],
    observe: Observer,
) -> GateResult:
    """A gate that needs no served target: the checkpoint only, or launches of its own."""
    target = TargetInfo(url=None, recipe=recipe.recipe, checkpoint_dir=prepared.checkpoint_dir,
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
    handle = timing.launch_started(recipe.id, "point")
    try:
        target = await asyncio.to_thread(
            launch, recipe, model=prepared.model, log_path=log_path, recipe_dir=loaded.directory,
            name=f"point-{writer.run_id}-{recipe.id}",
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
