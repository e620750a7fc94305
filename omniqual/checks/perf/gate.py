"""The ``perf`` check kind: fixed work, repeated on fresh server launches, judged against the
row's owned baseline.

Launches of one build differ by more than repetitions inside one do, so the unit judged is the
launch: the gate measures ``launches`` fresh launches of the row's recipe one after another and
judges the mean of their means, adding one at a time up to ``max_launches`` while undecided and
within budget. A deployment given by URL is one launch, said in the result. A server launched
with a profiler is ``invalid``, not measured (:mod:`omniqual.checks.perf.profiling`).

On each launch: a health check; ``warmup_repetitions`` passes over the work, discarded; then
``min_repetitions`` measured passes. On the last launch, more follow one at a time up to
``max_repetitions`` while undecided, within ``budget_s`` and while they could still decide
(not once the baseline's launch spread and the host's term alone keep the interval across the
threshold). The budget counts measuring seconds, not start-ups; a workload whose launches cannot
fit it (projected from the first warm-up) is ``invalid: host too slow for this workload``.

Verdict (the rule of :mod:`omniqual.loadgen.regression`): the two-sided ``confidence`` interval
on the relative change of the mean of the run's launch means of the baseline's metric against
the mean of the launches the baseline was set from, as wide as the mean of that many new
launches may fall from them (a baseline of fewer than three launches judges nothing):

* ``failed`` when the whole interval lies beyond the baseline's threshold in the bad direction;
* ``passed`` when the whole interval lies inside it;
* otherwise more repetitions or launches, and at the ceiling (or where more cannot decide)
  ``invalid: inconclusive`` with the interval.

Never a flake: a noisy host yields ``invalid``. With the server on this host (a CPU row), a
host off the baseline's widens the interval by as much as it may explain, and one reading slower
passes a run only by how far the baseline's own launches followed the reading
(:mod:`omniqual.loadgen.host_fit`); one that changed speed, saw more steal, was shared or is of
another CPU class is ``invalid`` (:mod:`omniqual.checks.perf.host`). A GPU row records its clocks
(:mod:`omniqual.checks.perf.gpu`). A failed request fails the gate; no baseline for the row's
hardware, serve config and work is ``invalid`` (launches recorded, so one can be set).
"""

import asyncio
import json
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, ClassVar, Literal

from omniqual.checks.base import CheckContext, CheckOutcome, PointLaunch
from omniqual.checks.load_binding import endpoint_for
from omniqual.checks.perf.gpu import GpuReading, GpuReadings, gpu_row, read_gpu_clocks
from omniqual.checks.perf.host import HostReadings, host_ratio, host_reason
from omniqual.checks.perf.judge import (
    BaselineLookup,
    find_baseline,
    judge,
    percentile_reason,
    repetitions_cannot_decide,
    serve_identity,
)
from omniqual.checks.perf.outcome import (
    LaunchRecord,
    PerfFacts,
    launch_note,
    perf_outcome,
    stopped_reason,
    verdict,
)
from omniqual.checks.perf.params import PerfParams, workload_sha256
from omniqual.checks.perf.profiling import profiled_reason
from omniqual.checks.perf.upstream import apply_config
from omniqual.checks.perf.work import Repetition, run_repetition
from omniqual.checks.workload_budget import HOST_TOO_SLOW
from omniqual.client import OmniClient
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.recipe import LaunchRecipe, RecipeKind, isa_caps
from omniqual.loadgen.cpu_class import host_cpu_class
from omniqual.loadgen.host_speed import (
    REFERENCE_WORKLOAD,
    SETTLE_S,
    CpuTimes,
    HostRatio,
    capped_reference_workload,
    reference_workload_s,
)
from omniqual.loadgen.regression import Comparison, Decision
from omniqual.loadgen.workload import EndpointKind

Fingerprint = Callable[[], Mapping[str, Any]]
ServePoint = Callable[[LaunchRecipe], AbstractAsyncContextManager[PointLaunch]]


def _host_fingerprint() -> Mapping[str, Any]:
    from omniqual.deploy.fingerprint import collect_fingerprint

    return collect_fingerprint().model_dump(mode="json")


def given_url(ctx: CheckContext) -> str | None:
    """The deployment to measure as it is (one launch), or None to launch the row's recipe."""
    recipe = ctx.target.recipe
    if recipe is not None and recipe.kind is RecipeKind.URL:
        return recipe.url
    return ctx.target.url if ctx.serve_point is None else None


class PerfCheck:
    kind: ClassVar[str] = "perf"
    params_model: ClassVar[type[PerfParams]] = PerfParams
    needs: ClassVar[Literal["server", "checkpoint", "launches"]] = "launches"
    measures: ClassVar[bool] = True  # request latency and throughput
    # Its start-ups may run beside other groups' work: it judges nothing of a start-up (no time
    # to ready, no memory while starting), each launch gets its discarded warm-up once the host
    # is its own again, and the host's readings are taken then too.
    shares_start_ups: ClassVar[bool] = True

    def __init__(self, fingerprint: Fingerprint = _host_fingerprint,
                 host_probe: Callable[[], float] = reference_workload_s,
                 cpu_times: Callable[[], CpuTimes] = CpuTimes.now,
                 settle_s: float = SETTLE_S,
                 gpu_reading: GpuReading = read_gpu_clocks,
                 cpu_class: Callable[[], str | None] = host_cpu_class) -> None:  # fmt: skip
        self.fingerprint = fingerprint
        self.cpu_class = cpu_class
        self.host_probe, self.cpu_times, self.settle_s = host_probe, cpu_times, settle_s
        self.gpu_reading = gpu_reading

    async def run(self, ctx: CheckContext, params: PerfParams) -> CheckOutcome:
        api_mode = ctx.row.get("api_mode")
        endpoint = endpoint_for(api_mode)
        if endpoint is None:
            return CheckOutcome(GateOutcome.SKIPPED, (f"api_mode {api_mode!r} has no HTTP "
                                                      "endpoint to measure",))  # fmt: skip
        if (profiled := profiled_reason(ctx.target.recipe)) is not None:
            return CheckOutcome(GateOutcome.INVALID, (profiled,))  # not measured at all
        params, template = apply_config(params, ctx)
        environment = dict(self.fingerprint())
        hardware = ctx.row.get("hardware")
        # Fresh readings per run: one check instance may run several rows and targets.
        on_gpu = gpu_row(hardware, environment)
        probe = (capped_reference_workload(isa_caps(hardware))  # as the server computes
                 if self.host_probe is reference_workload_s else self.host_probe)  # fmt: skip
        host = None if on_gpu else HostReadings(probe, self.cpu_times, self.settle_s,
                                                self.cpu_class(), ctx.target.pid)  # fmt: skip
        gpus = GpuReadings(self.gpu_reading, hardware) if on_gpu else None
        url = given_url(ctx)
        perf = _Perf(ctx, params, endpoint, template, environment, host, gpus, url is not None)
        recipe = ctx.target.recipe
        if url is not None:
            make = ctx.make_client if ctx.target.url == url else (lambda: OmniClient(url))
            await perf.measure_launch(make, ctx.target.pid is not None and ctx.target.agent is None)
        elif recipe is None or ctx.serve_point is None:
            return CheckOutcome(GateOutcome.INVALID, ("perf needs the row's launch recipe and a "
                                                      "launcher, or a served target",))  # fmt: skip
        else:
            await perf.launched(recipe, ctx.serve_point)
        return perf.outcome()


class _Perf:
    """One perf run: its launches, their repetitions, and the comparison once there is one."""

    def __init__(self, ctx: CheckContext, params: PerfParams, endpoint: EndpointKind,
                 template: dict[str, Any], environment: dict[str, Any],
                 host: HostReadings | None, gpus: GpuReadings | None,
                 one_launch: bool) -> None:  # fmt: skip
        self.ctx, self.params, self.endpoint = ctx, params, endpoint
        self.host, self.gpus, self.one_launch = host, gpus, one_launch
        hardware = ctx.row.get("hardware")
        workload = workload_sha256(params, endpoint.value)
        recipe = ctx.target.recipe.id if ctx.target.recipe is not None else None
        identity = serve_identity(ctx.provenance, recipe)
        lookup = (find_baseline(ctx.project_root / params.baselines_dir, ctx.row, hardware,
                                identity, workload, host.cpu_class if host else None)
                  if hardware else None)  # fmt: skip
        if lookup is not None and lookup.baseline is not None:
            short = percentile_reason(lookup.baseline.metric, params.requests)
            if short is not None:
                lookup = BaselineLookup(lookup.path, None, short)
        metric = lookup.baseline.metric if lookup and lookup.baseline else "latency_mean"
        self.facts = PerfFacts(ctx, params, lookup, identity, workload, metric, template,
                               environment)  # fmt: skip
        self.failures: list[str] = []
        self.invalid: list[str] = [] if hardware else [
            "the row names no hardware: no baseline applies"]  # fmt: skip
        self.settled: str | None = None
        self.stopped = False
        self.loop = asyncio.get_running_loop()
        self.spent = 0.0
        """Seconds spent measuring (start-ups excluded), against the gate's budget."""
        self.began: float | None = None
        self.longest = 0.0

    @property
    def baseline_judges(self) -> bool:
        return self.facts.lookup is not None and self.facts.lookup.baseline is not None

    @property
    def due(self) -> int:
        """Launches every run makes (a deployment given by URL: its one)."""
        return 1 if self.one_launch else self.params.launches

    @property
    def ceiling(self) -> int:
        return 1 if self.one_launch else self.params.launch_ceiling

    def _final_launch(self) -> bool:
        """Whether the launch under way is the last this run makes: repetitions beyond the
        minimum go there (only it may still narrow the interval it ends on)."""
        made = len(self.facts.launches)
        return made >= self.ceiling or (made >= self.due and not self.baseline_judges)

    def _fits(self, more: int) -> bool:
        """Whether ``more`` repetitions, and those owed to the launches every run makes, fit
        the budget at the longest repetition so far."""
        budget = self.ctx.gate.budget_s
        if budget is None:
            return True
        running = self.loop.time() - self.began if self.began is not None else 0.0
        owed = max(0, self.due - len(self.facts.launches)) * (
            self.params.warmup_repetitions + self.params.min_repetitions)  # fmt: skip
        return self.spent + running + (more + owed) * self.longest <= budget

    def _wants_launch(self) -> bool:
        if self.stopped:
            return False
        made = len(self.facts.launches)
        if made < self.due:
            if self._fits(0):
                return True
            # Later launches ran slower than the first's projection: the run ends short.
            budget = self.ctx.gate.budget_s
            self.invalid.insert(0, f"{HOST_TOO_SLOW} (measured: {made} of {self.due} launches "
                                   f"took {self.spent:.0f} s measuring; the rest do not fit "
                                   f"the gate's budget of {budget:g} s)")  # fmt: skip
            self.stopped = True
            return False
        c = self.facts.comparison
        undecided = c is not None and c.decision is Decision.UNDECIDED and self.settled is None
        per_launch = self.params.warmup_repetitions + self.params.min_repetitions
        return undecided and made < self.ceiling and self._fits(per_launch)

    async def launched(self, recipe: LaunchRecipe, serve_point: ServePoint) -> None:
        """Fresh launches of ``recipe``, one at a time, while the run wants one."""
        while self._wants_launch():
            number = len(self.facts.launches) + 1
            derived = recipe.model_copy(update={"id": f"{recipe.id}-perf{number}"})
            async with serve_point(derived) as point:
                if point.log_artifact is not None:
                    self.facts.logs.append(point.log_artifact)
                if point.make_client is None or point.target is None:
                    self.invalid.append(f"launch {number} did not serve: "
                                        f"{point.startup.reason} after "
                                        f"{point.startup.elapsed_s:.1f} s")  # fmt: skip
                    return
                local = point.target.pid is not None and point.target.agent is None
                if self.host is not None:  # this launch's tree is the server, not a neighbour
                    self.host.server_pid = point.target.pid
                await self.measure_launch(point.make_client, local)

    async def measure_launch(self, make_client: Callable[[], OmniClient], local: bool) -> None:
        launch = LaunchRecord(len(self.facts.launches) + 1)
        self.facts.launches.append(launch)
        self.began = self.loop.time()
        try:
            async with make_client() as client:
                await self._measure(client, launch, local)
        finally:
            self.spent += self.loop.time() - self.began
            self.began = None
        if not self.stopped:
            self._judge()

    async def _measure(self, client: OmniClient, launch: LaunchRecord, local: bool) -> None:
        """One launch's repetitions; ``local``: the server runs on this host, so the host's
        readings (a CPU row) or the GPU's (a GPU row) are of what it runs on."""
        params = self.params
        probing = local and self.host is not None
        gpus = self.gpus if local else None
        health = await client.send_raw("GET", "/health", timeout_s=10.0)
        if health.status != 200:
            self.failures.append(f"{self._on(launch)}before the work: GET /health "
                                 f"{health.status}")  # fmt: skip
            self.stopped = True
            return
        for _ in range(params.warmup_repetitions):
            await self._repetition(client, launch, warmup=True)
        if launch.number == 1 and launch.reps and not self._fits(params.min_repetitions):
            self._too_slow(launch.reps[-1])
            return
        if gpus is not None:
            gpus.read(launch.number, "before")
        if probing:
            assert self.host is not None
            await self.host.read(launch.readings)
        while True:
            rep = await self._repetition(client, launch, warmup=False)
            if probing:
                assert self.host is not None
                await self.host.read(launch.readings)
            if rep.failed_requests:
                self.failures.append(f"{self._on(launch)}repetition {rep.index}: "
                                     f"{rep.failed_requests} of {params.requests} requests "
                                     f"failed ({', '.join(rep.errors)})")  # fmt: skip
                self.stopped = True
                break
            if len(launch.values(self.facts.metric)) < params.min_repetitions:
                continue
            if not self._final_launch() or not self._more_repetitions(launch):
                break
        if probing:
            assert self.host is not None
            self.host.close()
        if gpus is not None:
            gpus.read(launch.number, "after")

    def _more_repetitions(self, launch: LaunchRecord) -> bool:
        """On the final launch: whether one more repetition is due (sequential rule)."""
        params = self.params
        room = len(launch.values(self.facts.metric)) < params.max_repetitions and self._fits(1)
        if not self.baseline_judges:
            # Nothing to judge: measure up to the ceiling, so a baseline set from this
            # result knows its spread from as many repetitions as the budget allows.
            return room
        c = self._judge()
        if c is None or c.decision is not Decision.UNDECIDED:
            return False
        lookup = self.facts.lookup
        assert lookup is not None and lookup.baseline is not None
        # Repetitions narrow only this launch's own term; past that, the budget buys nothing.
        ratio = self._ratio()
        self.settled = repetitions_cannot_decide(self.facts.judged_launches(), lookup.baseline,
                                                 params.confidence, ratio,
                                                 self._probes(ratio))  # fmt: skip
        return self.settled is None and room

    async def _repetition(self, client: OmniClient, launch: LaunchRecord,
                          warmup: bool) -> Repetition:  # fmt: skip
        index = sum(len(x.reps) for x in self.facts.launches)
        measured = sum(not r.warmup for r in launch.reps)
        what = "warm-up" if warmup else f"repetition {measured + 1}"
        self.ctx.progress(f"perf: {self._on(launch)}{what}", None)
        rep, run = await run_repetition(client, self.params, self.endpoint, index, warmup,
                                        launch=launch.number)  # fmt: skip
        launch.reps.append(rep)
        self.longest = max(self.longest, rep.duration)
        for row in run.rows():
            line = {"launch": launch.number, "repetition": index, "warmup": warmup,
                    **row.model_dump(mode="json")}  # fmt: skip
            self.facts.rows.append(json.dumps(line, sort_keys=True).encode() + b"\n")
        return rep

    def _on(self, launch: LaunchRecord) -> str:
        return "" if self.one_launch else f"launch {launch.number}, "

    def _too_slow(self, warmup: Repetition) -> None:
        params = self.params
        more = (f"{params.min_repetitions} more do" if self.due == 1 else
                f"{self.due} launches of {params.warmup_repetitions + params.min_repetitions} "
                "repetitions do")  # fmt: skip
        self.invalid.insert(0, f"{HOST_TOO_SLOW} (measured: a warm-up repetition took "
                               f"{warmup.duration:.1f} s; {more} not fit the gate's budget of "
                               f"{self.ctx.gate.budget_s:g} s)")  # fmt: skip
        self.stopped = True

    def _ratio(self) -> HostRatio | None:
        if self.host is None:
            return None
        baseline = self.facts.lookup.baseline if self.facts.lookup else None
        return host_ratio(self.host.readings, REFERENCE_WORKLOAD, baseline,
                          len(self.facts.launches))  # fmt: skip

    def _judge(self) -> Comparison | None:
        """The comparison of the launches so far, once the run has made every launch due."""
        lookup = self.facts.lookup
        launches = self.facts.judged_launches()
        if lookup is None or lookup.baseline is None or len(launches) < self.due:
            return None
        if any(len(values) < 2 for values in launches):
            return None
        ratio = self._ratio()
        self.facts.comparison = judge(launches, lookup.baseline, self.params.confidence, ratio,
                                      self._probes(ratio))  # fmt: skip
        return self.facts.comparison

    def _probes(self, ratio: HostRatio | None) -> list[float]:
        # Each judged launch's reading, where comparable with the baseline's (a ratio says so).
        return self.facts.judged_probes() if ratio is not None else []

    def outcome(self) -> CheckOutcome:
        facts = self.facts
        facts.speed = self.host.finish() if self.host is not None else None
        facts.ratio = self._ratio()
        facts.gpu = self.gpus.as_json() if self.gpus is not None else None
        facts.launch_note = launch_note(self.one_launch, self.params.launches,
                                        len(facts.launches))  # fmt: skip
        # On a GPU row nothing was probed, and the CPU's readings would say nothing anyway.
        host_why = (None if self.failures or self.gpus is not None
                    else host_reason(facts.speed, facts.lookup.baseline if facts.lookup else None,
                                     self.params))  # fmt: skip
        outcome, reasons = verdict(facts, self.failures, self.invalid, host_why,
                                   stopped_reason(facts, self.settled, self.ceiling))
        return perf_outcome(facts, outcome, reasons)
