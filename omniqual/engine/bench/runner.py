"""Drive one ``omniqual bench`` run: warm up, then one open-loop phase per offered rate (or the
probes of a saturation search), each summarized into a result phase with its verdict.

Each phase has its own seeded schedule (``seed + phase index``), so a rerun with the same seed
offers exactly the same arrivals. Warm-up requests (one per mix entry, sent one at a time) are
excluded from every figure; for a sweep without ``--slo`` they also give the solo latency the
default objective is built from (p50 within 3x of it, as the soak gate's search).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from omniqual import __version__
from omniqual.client import ClientError
from omniqual.engine.bench.callback_issue import issue_by_callbacks
from omniqual.engine.bench.options import BenchOptions
from omniqual.engine.bench.result import (
    BenchPhase,
    BenchResult,
    SweepSummary,
    build_phase,
    flat_fields,
)
from omniqual.engine.bench.target import bench_target
from omniqual.engine.bench.transport import Http1Send, judge, transport_label
from omniqual.loadgen.issuer import IssuerSettings, Send, issue
from omniqual.loadgen.records import LoadRun, OutcomeStatus, SendOutcome
from omniqual.loadgen.saturation import SearchSettings, SloTarget, find_saturation
from omniqual.loadgen.schedule import constant_schedule
from omniqual.loadgen.stats import ValidityPolicy, Verdict, summarize_run
from omniqual.loadgen.workload import EndpointKind, PlannedRequest, WorkloadSpec, plan_requests

Progress = Callable[[str, int, int], None]
"""(phase label, requests done, requests planned)."""

SLO_X_SOLO = 3.0


class TargetRefused(ClientError):
    """Every warm-up request failed: exit 3 with what the target answered."""


def _quiet(_label: str, _done: int, _total: int) -> None:
    return None


@dataclass(slots=True)
class _Counting:
    """Reports each finished request to the progress callback (the CLI's progress bar)."""

    send: Send
    label: str
    total: int
    report: Progress
    done: int = 0

    async def __call__(self, planned: PlannedRequest, /) -> SendOutcome:
        try:
            return await self.send(planned)
        finally:
            self.finished(self.done + 1)

    def finished(self, done: int) -> None:
        self.done = done
        # At most ~100 reports a phase: the bar must not cost the issuer its schedule.
        if done == self.total or done % max(1, self.total // 100) == 0:
            self.report(self.label, done, self.total)


def describe(spec: WorkloadSpec, model: str) -> dict[str, str]:
    """endpoint, model, dataset and task as vLLM-Omni's result names them."""
    from omniqual.checks.load_binding import PATH_OF

    endpoints = dict.fromkeys(PATH_OF[e.endpoint] for e in spec.entries)
    tasks = dict.fromkeys(e.task for e in spec.entries)
    return {"endpoint": ",".join(endpoints), "model": model, "dataset": spec.name,
            "task": ",".join(tasks)}  # fmt: skip


class BenchSession:
    """The phases of one run over one ``Send``; ``phases`` collects their results."""

    def __init__(self, options: BenchOptions, spec: WorkloadSpec, send: Send,
                 meta: dict[str, str], progress: Progress) -> None:  # fmt: skip
        self.options, self.spec, self.send, self.meta = options, spec, send, meta
        self.progress = progress
        self.phases: list[BenchPhase] = []
        self.policy = ValidityPolicy(
            claimed_percentiles=(50.0, 95.0, 99.0),
            confidence=options.confidence,
            max_p99_issue_lag_s=options.max_p99_issue_lag_s,
        )

    async def warm_up(self) -> float:
        """One request per entry, one at a time; the median solo latency of the OK ones.

        A target that refuses every warm-up request (wrong model, a route it lacks) is a
        target problem said at once, not a benchmark of error answers.
        """
        schedule = constant_schedule(1.0, count=max(10, 4 * len(self.spec.entries)))
        plan = plan_requests(self.spec, schedule)
        seen: dict[str, PlannedRequest] = {}
        for planned in plan:
            seen.setdefault(planned.entry, planned)
        solo: list[float] = []
        errors: list[str] = []
        for planned in seen.values():
            started = time.monotonic()
            outcome = await self.send(planned)
            if outcome.status is OutcomeStatus.OK:
                solo.append(time.monotonic() - started)
            else:
                errors.append(f"{planned.entry}: {outcome.error_kind or outcome.status.value}")
        if not solo:
            raise TargetRefused(
                f"the target answered no warm-up request successfully ({'; '.join(errors)}); "
                "nothing was benchmarked"
            )
        return statistics.median(solo)

    async def phase(self, rate: float) -> LoadRun:
        options = self.options
        schedule = options.schedule(rate, seed_offset=len(self.phases))
        plan = plan_requests(self.spec, schedule)
        label = f"{rate:.4g}/s" if schedule.rate is not None else "trace"
        counting = _Counting(self.send, label, len(plan), self.progress)
        settings = IssuerSettings(
            in_flight_cap=options.in_flight_cap,
            deadline_s=schedule.window_s + options.request_timeout_s,
        )
        if self._callback_path(plan):
            assert isinstance(self.send, Http1Send)
            run = await issue_by_callbacks(
                self.send.pool, plan, schedule, self.send.prepare, judge, settings,
                timeout_s=options.request_timeout_s, done=counting.finished,
            )  # fmt: skip
        else:
            run = await issue(plan, schedule, counting, settings)
        summary = summarize_run(run, self.policy)
        self.phases.append(build_phase(run, summary, meta=self.meta, profile=options.profile.label))
        return run

    def _callback_path(self, plan: Sequence[PlannedRequest]) -> bool:
        """Request/answer endpoints over the HTTP/1.1 pool, uncapped: no task per request
        (``callback_issue``). Async video jobs and an in-flight cap take the generic issuer."""
        return (
            isinstance(self.send, Http1Send)
            and self.options.in_flight_cap is None
            and all(p.endpoint is not EndpointKind.VIDEO_ASYNC for p in plan)
        )

    async def sweep(self, solo_s: float) -> SweepSummary:
        options = self.options
        if options.slo is not None:
            percentile, bound = options.slo
        else:
            percentile, bound = 50.0, SLO_X_SOLO * solo_s
        slo = SloTarget(percentile=percentile, bound_s=bound, confidence=options.confidence)
        start = 0.5 / solo_s if solo_s > 0 else options.max_rate
        settings = SearchSettings(
            start_rate=min(max(start, 0.05), options.max_rate),
            min_rate=0.05,
            max_rate=options.max_rate,
            precision=0.1,
            max_probes=8,
        )
        found = await find_saturation(self.phase, slo, settings)
        return SweepSummary(
            slo_percentile=percentile,
            slo_bound_s=bound,
            saturation_rate=found.best_rate,
            lowest_failing_rate=found.lowest_failing_rate,
            stop_reason=found.stop_reason.value,
            probe_verdicts=tuple(f"{p.rate:.4g}/s {p.verdict.value}" for p in found.probes),
        )


async def run_bench(options: BenchOptions, progress: Progress = _quiet) -> BenchResult:
    spec = WorkloadSpec.from_yaml(options.workload)
    started = datetime.now(UTC).isoformat(timespec="seconds")
    async with (
        bench_target(options.target) as target,
        Http1Send(target.url, timeout_s=options.request_timeout_s) as send,
    ):
        transport = transport_label()
        bench = BenchSession(options, spec, send, describe(spec, target.model), progress)
        solo = await bench.warm_up()
        sweep = None
        if options.sweep:
            sweep = await bench.sweep(solo)
        else:
            for rate in options.rates:
                await bench.phase(rate)
    reasons = tuple(
        f"phase {p.offered_rate:.4g}/s: {reason}" for p in bench.phases for reason in p.reasons
    )
    return BenchResult(
        omniqual_version=__version__,
        started_at=started,
        target=target.label,
        workload=spec.name,
        mode=options.mode,
        transport=transport,
        confidence=options.confidence,
        max_p99_issue_lag_s=options.max_p99_issue_lag_s,
        phases=tuple(bench.phases),
        sweep=sweep,
        verdict=Verdict.INVALID if reasons else Verdict.VALID,
        reasons=reasons,
        **flat_fields(tuple(bench.phases)),
    )
