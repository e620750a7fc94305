"""The ``abort`` check kind: cancellation, disconnect and timeout cases with cleanup checks.

The endpoint follows the row's api_mode: ``videos-async`` has a job lifecycle (DELETE cases);
the sync endpoints get disconnect and timeout cases. One request is calibrated first (made
longer until its solo run takes ``min_service_s`` and its late cut can decide: ``calibration``)
and every cut is timed from it. Around the
cases the server's resources are watched; afterwards memory, FDs and temp files must return to
the baseline within bounds (polled up to ``settle_max_s``), a known-good request must succeed,
the request served alone before the cases must give the same output again (its own policy, nothing
of a cut request left in it) and the server's /metrics must count no request running or waiting
(the cut requests' scheduler entries removed).
Each case is a ``CaseResult``. Work after every cut is measured on the server (``work``) and
held to the row's abort boundary: a queued cut that runs, or a step-execution cut that runs past
the next step, fails; request-level execution that runs on is a stated limitation of the row.
A signal that is absent (no work signal, no memory figure, no watch directory, NVML on a GPU
row) makes the gate ``invalid``, never ``passed``.
"""

import asyncio
import json
import time
from dataclasses import asdict
from typing import ClassVar, Literal

from omniqual.checks.abort.calibration import calibrate, timed_steps
from omniqual.checks.abort.cases import AbortDriver
from omniqual.checks.abort.cleanup_record import abort_cleanup
from omniqual.checks.abort.params import AbortParams
from omniqual.checks.abort.peer_runs import next_request
from omniqual.checks.abort.plan import run_cases
from omniqual.checks.abort.work import (
    DenoiseSplit,
    WorkBaseline,
    WorkMeter,
    boundary_of,
    clock_tick_s,
)
from omniqual.checks.base import CheckContext, CheckOutcome, verdict
from omniqual.checks.load_binding import endpoint_for
from omniqual.checks.observed import Observed, observed
from omniqual.checks.soak.resources import absent_signals, gpu_growth, growth_findings
from omniqual.checks.soak.watch import MIB, ResourcePoint, ResourceWatch, points_jsonl
from omniqual.checks.workload_budget import projected_past_budget
from omniqual.client import OmniClient
from omniqual.domain.evidence import Measurement
from omniqual.domain.outcomes import GateOutcome
from omniqual.loadgen.workload import EndpointKind

SOLO_RUNS_OF_CASES = 18
"""About how many calibrated solo runs the cases take, with their work windows and the
known-good request after each (a sync row's cuts, burst and timeout; an async row's cancels;
the queued cut's peer served alone twice first)."""


class AbortCheck:
    kind: ClassVar[str] = "abort"
    params_model: ClassVar[type[AbortParams]] = AbortParams
    needs: ClassVar[Literal["server", "checkpoint", "launches"]] = "server"
    measures: ClassVar[bool] = True  # CPU time and step timing after a cut

    async def run(self, ctx: CheckContext, params: AbortParams) -> CheckOutcome:
        api_mode = ctx.row.get("api_mode")
        endpoint = endpoint_for(api_mode)
        if endpoint is None:
            return CheckOutcome(GateOutcome.SKIPPED, (f"api_mode {api_mode!r} has no HTTP "
                                                      "endpoint to abort on",))  # fmt: skip
        async with (ctx.make_client() as client, ctx.make_client() as side,
                    observed(ctx.target, params.watch_dirs) as seen):  # fmt: skip
            return await _run(ctx, params, endpoint, client, side, seen)


async def _settle(watch: ResourceWatch, baseline: ResourcePoint, params: AbortParams,
                  ) -> ResourcePoint:  # fmt: skip
    """Poll until memory, FDs and temp files are back within bounds, or the time is up."""
    deadline = time.monotonic() + params.settle_max_s
    while True:
        point = await watch.snapshot()
        back = _within(baseline, point, params)
        if back or time.monotonic() >= deadline:
            return point
        await asyncio.sleep(0.5)


def _within(baseline: ResourcePoint, point: ResourcePoint, params: AbortParams) -> bool:
    def grew(a: int | None, b: int | None) -> int:
        return 0 if a is None or b is None else b - a

    return (grew(baseline.memory_bytes, point.memory_bytes) <= params.max_memory_growth_mib * MIB
            and grew(baseline.open_fds, point.open_fds) <= params.max_fd_growth
            and grew(baseline.temp_files, point.temp_files) <= params.max_temp_file_growth)


async def _run(ctx: CheckContext, params: AbortParams, endpoint: EndpointKind,
               client: OmniClient, side: OmniClient, seen: Observed) -> CheckOutcome:  # fmt: skip
    health = await side.send_raw("GET", "/health", timeout_s=params.health_timeout_s)
    if health.status != 200:
        return CheckOutcome(GateOutcome.FAILED, (f"before the cases: GET /health {health.status}",))
    ctx.progress("abort: calibration", 0.0)
    driver, problems, summary = await calibrate(ctx, params, endpoint, client, side)
    if driver is None:
        return CheckOutcome(GateOutcome.FAILED, tuple(problems))
    too_slow = projected_past_budget(driver.solo_s, SOLO_RUNS_OF_CASES, ctx.gate.budget_s,
                                     "one calibrated solo request")  # fmt: skip
    if too_slow is not None:
        solo = Measurement(name="solo_service", value=round(driver.solo_s, 3), unit="s")
        return CheckOutcome(GateOutcome.INVALID, (too_slow,), measurements=(solo,))
    dirs = seen.watch_dirs
    watch = ResourceWatch(side, tree=seen.tree, watch_dirs=dirs, interval_s=0.5)
    failures: list[str] = []
    invalid: list[str] = []
    steps = summary.get("steps")
    driver.boundary = boundary_of(ctx.row.get("execution"))
    driver.execution = ctx.row.get("execution")
    driver.meter = WorkMeter(side, seen.tree, params.work_poll_s)
    steps = steps if isinstance(steps, int) else None
    spread = summary.get("solo_spread_s")
    driver.work_base = await _work_baseline(driver, params, steps,
                                            spread if isinstance(spread, float) else None,
                                            timed_steps(summary.get("calibration")))  # fmt: skip
    signals = driver.meter.signals()
    if not signals:
        invalid.append("whether cut work kept running could not be measured: /metrics has no "
                       "vllm_omni:num_requests_running/waiting gauges and the server's process "
                       "tree cannot be read (no pid, no --agent: no CPU time)")  # fmt: skip
    summary["work"] = {"boundary": driver.boundary.value, "signals": signals,
                       "baseline": asdict(driver.work_base),
                       "cuts": driver.work_log}  # filled in as the cuts are judged  # fmt: skip
    async with watch:
        baseline = await watch.snapshot()
        ctx.progress("abort: cases", 0.2)
        cases = await run_cases(driver, params)
        ctx.progress("abort: settle", 0.9)
        settle_started = time.monotonic()
        after = await _settle(watch, baseline, params)
        settle_s = time.monotonic() - settle_started
    for case in cases:
        failures += case.failures
        invalid += case.invalid
    measurements = [Measurement(name="solo_latency_s", value=round(driver.solo_s, 4), unit="s")]
    if baseline.memory_bytes is not None and after.memory_bytes is not None:
        grew = (after.memory_bytes - baseline.memory_bytes) / MIB
        bound = params.max_memory_growth_mib
        measurements.append(Measurement(name="memory_growth_mib", value=round(grew, 2),
                                        unit="MiB", bound=bound, ok=grew <= bound))  # fmt: skip
        if grew > bound:
            failures.append(f"after the abort cases: memory did not return to baseline within "
                            f"{params.settle_max_s:g} s: +{grew:.1f} MiB "
                            f"({watch.source}), bound {bound:g} MiB")  # fmt: skip
    what = "after the abort cases"
    growth = growth_findings(baseline, after, params.max_fd_growth, params.max_temp_file_growth,
                             what)  # fmt: skip
    growth.extend(gpu_growth(baseline, after, params.max_gpu_memory_growth_mib, what))
    failures += growth.failures
    invalid += growth.invalid + absent_signals(baseline, after, dirs, ctx.row.get("hardware"), what)
    measurements += growth.measurements
    measurements += [Measurement(name=f"{c.id}.work_after_cut_s", unit="s",
                                 value=round(c.ran_on_s, 4))
                     for c in cases if c.ran_on_s is not None]  # fmt: skip
    limitations = [text for c in cases for text in c.limitations]
    measurements += [Measurement(name=f"{c.id}.next_request_extra_s", unit="s",
                                 value=round(c.extra_latency_s, 4))
                     for c in cases if c.extra_latency_s is not None]  # fmt: skip
    ok, what = await driver.complete_one()
    if not ok:
        failures.append(f"the known-good request after all cases failed: {what}")
    seen_next, wrong = await next_request(driver)
    summary["next_request"] = seen_next
    if wrong is not None:
        failures.append(wrong)
    assert driver.meter is not None  # set before the cases
    left = await _scheduler_left(driver.meter, max(params.settle_max_s, 2 * driver.solo_s),
                                 params.work_poll_s)  # fmt: skip
    summary["scheduler_after"] = left
    if left is None:
        invalid.append("whether the scheduler let go of the cut requests could not be checked: "
                       "/metrics has no vllm_omni:num_requests_running/waiting gauges")  # fmt: skip
    elif left > 0:
        failures.append("after the abort cases and the known-good request the scheduler still "
                        f"holds requests: /metrics running + waiting = {left:g} (entries of cut "
                        "requests never removed)")  # fmt: skip
    summary.update({"endpoint": endpoint.value, "watch_dirs": [str(d) for d in dirs],
                    "resource_source": watch.source, "resource_agent": seen.details or None,
                    "baseline": asdict(baseline),
                    "after": asdict(after), "known_good_after": what,
                    "cases": [c.result().model_dump(mode="json") for c in cases],
                    "failures": failures, "invalid": invalid})  # fmt: skip
    # Recorded for the report (figures and plot); the verdict above does not read it.
    cleanup = abort_cleanup(
        boundary=driver.boundary.value, signals=signals, base=driver.work_base,
        work_log=driver.work_log, job_log=driver.job_log, source=watch.source,
        baseline=baseline, after=after,
        settle_s=settle_s, params=params,
    ).model_dump(mode="json")
    put = ctx.artifacts.put_artifact
    artifacts = (
        put(points_jsonl(watch.points), media_type="application/x-ndjson", role="raw-series",
            name="abort-resources.jsonl"),
        put(json.dumps(summary, indent=1, default=str).encode(), media_type="application/json",
            role="summary", name="abort-summary.json"),
    )  # fmt: skip
    return CheckOutcome(
        verdict(failures, invalid=invalid), tuple(failures + invalid), tuple(measurements),
        artifacts, tuple(c.result() for c in cases),
        requested={"points": dict(params.points), "shape": params.shape.model_dump()},
        effective={"steps": summary.get("steps"), "solo_s": driver.solo_s,  # type: ignore[dict-item]
                   "abort_cleanup": cleanup, "next_request": seen_next},
        limitations=tuple(limitations),
    )


async def _scheduler_left(meter: WorkMeter, wait_s: float, poll_s: float) -> float | None:
    """Requests the server still counts running or waiting once it should be idle (AB-04),
    polled up to ``wait_s`` (a request-mode row may still finish a cut's work); None where
    /metrics carries no gauges."""
    deadline = time.monotonic() + wait_s
    while True:
        busy = (await meter.read()).busy
        if busy is None or busy <= 0 or time.monotonic() >= deadline:
            return busy
        await asyncio.sleep(poll_s)


async def _work_baseline(driver: AbortDriver, params: AbortParams, steps: int | None,
                         solo_spread_s: float | None,
                         timed_steps: list[tuple[int, float]]) -> WorkBaseline:  # fmt: skip
    """The server's CPU rate idle (polled as the cuts will be, in ``calibration_repeats``
    contiguous parts of the idle window, whose spread is the idle CPU noise) and serving one
    request alone, with what its CPU time can resolve (a clock tick per process of its tree)."""
    meter = driver.meter
    assert meter is not None
    processes = await meter.processes()
    repeats = params.calibration_repeats
    idle = await meter.contiguous(repeats, params.idle_window_s / repeats)
    start = await meter.read()
    await driver.complete_one()
    end = await meter.read()
    idle_rate = busy_rate = spread = idle_s = part_s = None
    timed = [w for w in idle if w.cpu_s is not None and w.seconds > 0]
    if len(timed) == len(idle):
        rates = [w.cpu_s / w.seconds for w in timed if w.cpu_s is not None]
        idle_s = sum(w.seconds for w in timed)
        idle_rate = sum(w.cpu_s or 0.0 for w in timed) / idle_s
        spread = max(rates) - min(rates)
        part_s = min(w.seconds for w in timed)
    if start.cpu_s is not None and end.cpu_s is not None and end.at > start.at:
        busy_rate = (end.cpu_s - start.cpu_s) / (end.at - start.at)
    cpu = meter.cpu
    # CPU time read but the tree not counted: it holds at least the process that was read.
    return WorkBaseline(idle_rate, busy_rate, driver.solo_s, steps, idle_rate_spread=spread,
                        solo_spread_s=solo_spread_s,
                        processes=(processes or 1) if cpu else None,
                        clock_tick_s=clock_tick_s() if cpu else None, idle_s=idle_s,
                        idle_part_s=part_s, split=DenoiseSplit.fit(timed_steps))  # fmt: skip
