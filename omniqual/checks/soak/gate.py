"""The ``soak`` check kind: a mixed-RPS soak below, near and above a measured saturation rate.

Order of work: health, warmup and solo calibration per shape, a bounded saturation search (or a
given rate), then open-loop phases at multiples of it with a small share of injected
disconnects / job cancellations, while the server's resources and ``/health`` are watched.
After a settle period: a final resource point, a known-good request and (async video) a job
list without orphans. Evidence: per-request records (JSONL), the resource series and health
probes (JSONL, plus the observer's CSV when the pid is known) and a summary (JSON).

Verdicts blame the right side: an SLO miss while the client had already fallen behind its
schedule is ``invalid`` (client-limited); a miss near the saturation estimate with completions
behind the offered rate is ``invalid`` only while the phase kept the server busy (a request
outstanding) nearly throughout, and ``failed`` when the server sat idle a measurable share of
it (it ran below capacity; each phase records its busy fraction); injected faults that were
answered before their cut are counted and a soak whose injections did not happen is
``invalid``; and a saturation rate that was not found is recorded as absent (no
``saturation_rps`` measurement, ``null`` in the summary), never as 0/s.
"""

import asyncio
import json
import logging
import re
from dataclasses import asdict
from typing import Any, ClassVar, Literal

from omniqual.checks.base import CheckContext, CheckOutcome, verdict
from omniqual.checks.load_binding import BindingSettings, OmniSend, endpoint_for
from omniqual.checks.observed import Observed, observed
from omniqual.checks.soak.judge import Findings, PhaseEvidence, judge_injections, judge_phase
from omniqual.checks.soak.params import SoakParams
from omniqual.checks.soak.phases import (
    Calibration,
    calibrate,
    injection_bindings,
    phase_bound_s,
    run_load,
    search_saturation,
    solo_request,
    timed,
)
from omniqual.checks.soak.resources import judge_resources
from omniqual.checks.soak.series import PhaseRun, soak_series, stage_accounting
from omniqual.checks.soak.watch import HealthProbe, ResourceWatch, points_jsonl
from omniqual.checks.workload_budget import budget_measurement
from omniqual.client import ClientError, OmniClient
from omniqual.domain.evidence import Artifact, Measurement
from omniqual.domain.outcomes import GateOutcome
from omniqual.loadgen.host_speed import CpuTimes
from omniqual.loadgen.occupancy import request_occupancy
from omniqual.loadgen.records import OutcomeStatus
from omniqual.loadgen.saturation import SaturationResult, StopReason
from omniqual.loadgen.workload import EndpointKind

logger = logging.getLogger(__name__)


def saturation_rate(result: SaturationResult) -> tuple[float | None, str | None]:
    """The rate phases scale from, or why there is none."""
    if result.best_rate is None:
        return None, f"saturation search found no passing rate ({result.stop_reason.value})"
    if result.stop_reason is StopReason.MAX_RATE_PASSES:
        return None, f"saturation not reached: {result.best_rate:.3g}/s (max_rps) still passed"
    if result.stop_reason is StopReason.CLIENT_LIMITED and result.lowest_failing_rate is None:
        return None, "saturation search stopped: the client could not issue on schedule"
    # Client-limited inside a bracket: the saturation lies between the best passing and the
    # lowest failing rate; phases scale from the passing end (conservative), and the summary
    # keeps the bracket and the stop reason.
    if result.lowest_failing_rate is None:
        return None, f"saturation not bracketed ({result.stop_reason.value})"
    return result.best_rate, None


def served_at_once(execution: str | None) -> int:
    """How many requests the row's execution mode serves together (``request-batch/N…``)."""
    found = re.match(r"request-batch/(\d+)", execution or "")
    return max(1, int(found.group(1))) if found else 1


class SoakCheck:
    kind: ClassVar[str] = "soak"
    params_model: ClassVar[type[SoakParams]] = SoakParams
    needs: ClassVar[Literal["server", "checkpoint", "launches"]] = "server"
    measures: ClassVar[bool] = True  # latency percentiles and resource growth

    async def run(self, ctx: CheckContext, params: SoakParams) -> CheckOutcome:
        api_mode = ctx.row.get("api_mode")
        endpoint = endpoint_for(api_mode)
        if endpoint is None:
            return CheckOutcome(GateOutcome.SKIPPED, (f"api_mode {api_mode!r} has no HTTP "
                                                      "endpoint the soak can load",))  # fmt: skip
        async with (ctx.make_client() as client, ctx.make_client() as side,
                    observed(ctx.target, params.reliability.watch_dirs) as seen):  # fmt: skip
            return await _Soak(ctx, params, endpoint, client, side, seen).run()


class _Soak:
    def __init__(self, ctx: CheckContext, params: SoakParams, endpoint: EndpointKind,
                 client: OmniClient, side: OmniClient, seen: Observed) -> None:  # fmt: skip
        self.ctx, self.params, self.endpoint, self.side = ctx, params, endpoint, side
        self.seen = seen
        settings = BindingSettings(request_timeout_s=params.request_timeout_s,
                                   job_timeout_s=params.request_timeout_s)  # fmt: skip
        self.send = OmniSend(client, settings)
        self.found = Findings()
        self.summary: dict[str, Any] = {"endpoint": endpoint.value, "arrival": params.arrival}
        self.rows: list[bytes] = []
        # Recorded for the report (plots, stage accounting); never judged.
        self.series: dict[str, Any] | None = None
        self.stages: dict[str, Any] | None = None
        self.phase_runs: list[PhaseRun] = []

    async def run(self) -> CheckOutcome:
        ctx, params = self.ctx, self.params
        health = HealthProbe(self.side, interval_s=params.reliability.health_interval_s,
                             timeout_s=params.reliability.health_timeout_s)  # fmt: skip
        first = await health.check()
        if not first.healthy:
            return CheckOutcome(GateOutcome.FAILED, ("before the soak: " + health.describe(first),))
        ctx.progress("soak: warmup and calibration", 0.0)
        calibration = await calibrate(self.send, params, self.endpoint, ctx.gate.budget_s,
                                      served_at_once(ctx.row.get("execution")))  # fmt: skip
        self.summary["solo_latency_s"] = dict(calibration.solo_s)
        if calibration.too_slow is not None and ctx.gate.budget_s is not None:
            return CheckOutcome(GateOutcome.INVALID, (calibration.too_slow,),
                                measurements=(budget_measurement(ctx.gate.budget_s),),
                                effective={"summary": self.summary})  # fmt: skip
        if calibration.failures:
            return self._outcome(list(calibration.failures), [], [])
        self.send.bindings = injection_bindings(params, self.endpoint, calibration)
        dirs = self.seen.watch_dirs
        watch = ResourceWatch(self.side, tree=self.seen.tree, watch_dirs=dirs,
                              interval_s=params.reliability.observer_interval_s)  # fmt: skip
        self.summary["resource_source"] = watch.source
        self.summary["resource_agent"] = self.seen.details or None
        self.summary["watch_dirs"] = [str(d) for d in dirs]
        async with health, watch:
            rate = await self._saturation(calibration)
            if rate is not None:
                # The saturation search is the warm-up: allocator pools, caches and worker
                # threads grow there. Slopes and growth are judged on the phases only.
                baseline = await watch.snapshot()
                await self._phases(rate, calibration)
                await _sleep(params.reliability.settle_s)
                after = await watch.snapshot()
                window = [p for p in watch.points if p.elapsed_s >= baseline.elapsed_s]
                self.found.extend(judge_resources(
                    window, baseline, after, params.reliability, watch_dirs=dirs,
                    hardware=ctx.row.get("hardware")))  # fmt: skip
                await self._afterwards()
        self.found.failures += [f"health: {health.describe(e)}" for e in health.failures()[:3]]
        self.summary["health"] = {"probes": len(health.events),
                                  "failures": len(health.failures())}  # fmt: skip
        artifacts = self._artifacts(watch, health)
        return self._outcome(self.found.failures, self.found.invalid, artifacts)

    async def _saturation(self, calibration: Calibration) -> float | None:
        spec = self.params.saturation
        if spec.assume_rps is not None:
            self.summary["saturation"] = {"assumed_rps": spec.assume_rps}
            return spec.assume_rps
        self.ctx.progress("soak: saturation search", 0.1)
        result = await search_saturation(self.send, self.params, self.endpoint, calibration,
                                         self.ctx.seed)  # fmt: skip
        rate, problem = saturation_rate(result)
        self.summary["saturation"] = {
            "slo": result.slo.model_dump(), "stop_reason": result.stop_reason.value,
            "best_rps": result.best_rate, "lowest_failing_rps": result.lowest_failing_rate,
            "probes": [{"rate": p.rate, "verdict": p.verdict.value,
                        "samples": p.certificate.samples, "over_bound": p.certificate.overlatency,
                        "issue_fidelity": p.issue_fidelity} for p in result.probes],
        }  # fmt: skip
        # No rate found is an absent figure, never a measured 0/s.
        self.summary["saturation"]["saturation_rps"] = rate
        if rate is not None:
            self.found.measurements.append(Measurement(
                name="saturation_rps", value=rate, unit="1/s",
                samples=sum(p.certificate.samples for p in result.probes)))  # fmt: skip
        if problem is not None:
            self.found.invalid.append(problem)
        return rate

    async def _phases(self, saturation: float, calibration: Calibration) -> None:
        phases = self.params.phases
        self.summary["phases"] = []
        runs = []
        for number, spec in enumerate(phases):
            rate = spec.factor * saturation
            self.ctx.progress(f"soak phase {spec.name}", 0.2 + 0.7 * number / len(phases))
            before = len(self.send.jobs)
            ticks = CpuTimes.now()
            run = await run_load(self.send, self.params, self.endpoint, rate=rate,
                                 count=spec.requests, seed=self.ctx.seed + 10 * (number + 1),
                                 injected=True, max_duration_s=spec.max_duration_s,
                                 phase=spec, calibration=calibration)  # fmt: skip
            searched = self.params.saturation  # a rate assumed outright is known exactly
            precision = None if searched.assume_rps else searched.precision
            # Steal on this host slows the server only when the server runs here.
            local = self.ctx.target.pid is not None and self.ctx.target.agent is None
            steal = CpuTimes.now().steal_fraction_since(ticks) if local else None
            evidence = PhaseEvidence(spec, rate, run, tuple(self.send.jobs[before:]),
                                     phase_bound_s(spec, calibration), precision,
                                     steal)  # fmt: skip
            runs.append(run)
            self.phase_runs.append(PhaseRun(spec.name, spec.factor, rate, run))
            found, summary = judge_phase(evidence, self.params.validity)
            self.found.extend(found)
            occupied = request_occupancy(run.records)
            for row in run.rows():
                line = {"phase": spec.name, **row.model_dump(mode="json")}
                self.rows.append(json.dumps(line, sort_keys=True).encode() + b"\n")
            self.summary["phases"].append({
                "name": spec.name, "factor": spec.factor, "offered_rps": rate,
                "slo_bound_s": evidence.bound_s, "counts": asdict(summary.counts),
                "rates": asdict(summary.rates), "latency_from_schedule":
                asdict(summary.latency_from_schedule), "validity": summary.validity.verdict.value,
                "duration_s": run.effective.actual_duration_s, "host_steal_fraction": steal,
                "busy_fraction": occupied.busy_fraction, "mean_in_flight": occupied.mean_in_flight,
                "jobs": [{"id": j.job_id, "terminal": list(j.terminal_states),
                          "cancelled": j.cancelled} for j in evidence.jobs],
            })  # fmt: skip
        self.found.extend(judge_injections(runs, self.params.injections))

    async def _afterwards(self) -> None:
        shape = min(self.params.shapes, key=lambda s: (s.width or 0) * (s.height or 0))
        outcome, latency = await timed(self.send, solo_request(shape, self.endpoint, 0, 7))
        self.summary["known_good_after"] = {"status": outcome.status.value,
                                            "latency_s": latency}  # fmt: skip
        if outcome.status is not OutcomeStatus.OK:
            self.found.failures.append(
                f"known-good {shape.name!r} request after the soak failed: "
                f"{outcome.error_kind or outcome.status.value} (HTTP {outcome.status_code})")
        if self.endpoint is EndpointKind.VIDEO_ASYNC:
            try:
                listed = await self.side.list_videos(limit=100)
            except ClientError as exc:
                self.found.failures.append(f"GET /v1/videos after the soak failed: {exc}")
                return
            orphans = [j.id for j in listed.data if j.status in ("queued", "in_progress")]
            if orphans:
                self.found.failures.append(f"job list holds {len(orphans)} unfinished job(s) "
                                           f"after the drain: {orphans[:5]}")  # fmt: skip

    def _artifacts(self, watch: ResourceWatch, health: HealthProbe) -> list[Artifact]:
        put = self.ctx.artifacts.put_artifact
        found = [put(b"".join(self.rows), media_type="application/x-ndjson",
                     role="raw-requests", name="soak-requests.jsonl")]  # fmt: skip
        found.append(put(points_jsonl(watch.points), media_type="application/x-ndjson",
                         role="raw-series", name="soak-resources.jsonl"))  # fmt: skip
        probes = b"".join(json.dumps(asdict(e)).encode() + b"\n" for e in health.events)
        found.append(put(probes, media_type="application/x-ndjson", role="raw-series",
                         name="soak-health.jsonl"))  # fmt: skip
        if self.phase_runs:
            series = soak_series(self.phase_runs, watch.points, watch.started_at_unix,
                                 watch.source)  # fmt: skip
            found.append(put(series.model_dump_json(indent=1).encode(),
                             media_type="application/json", role="raw-series",
                             name="soak-series.json"))  # fmt: skip
            self.series = series.compacted().model_dump(mode="json")
            self.stages = stage_accounting(self.phase_runs).model_dump(mode="json")
        self.summary["failures"], self.summary["invalid"] = self.found.failures, self.found.invalid
        found.append(put(json.dumps(self.summary, indent=1, default=str).encode(),
                         media_type="application/json", role="summary",
                         name="soak-summary.json"))  # fmt: skip
        return found

    def _outcome(self, failures: list[str], invalid: list[str],
                 artifacts: list[Artifact]) -> CheckOutcome:  # fmt: skip
        return CheckOutcome(
            verdict(failures, invalid=invalid), tuple(failures + invalid),
            tuple(self.found.measurements), tuple(artifacts),
            requested={"phases": [p.name for p in self.params.phases],
                       "shapes": [s.name for s in self.params.shapes]},
            effective={**{k: v for k, v in self.summary.items() if k in ("saturation",
                                                                          "solo_latency_s")},
                       **({"soak_series": self.series} if self.series else {}),
                       **({"stage_accounting": self.stages} if self.stages else {})},
        )  # fmt: skip


async def _sleep(seconds: float) -> None:
    if seconds > 0:
        await asyncio.sleep(seconds)
