"""The ``perf`` check kind: fixed work, repeated, judged against the row's owned baseline.

Order of work: a health check; ``warmup_repetitions`` passes over the work, discarded; then
``min_repetitions`` measured passes; then, while the verdict is undecided, one more at a time up
to ``max_repetitions`` and only while the next one still fits the gate's ``budget_s`` and could
still decide (sequential): once the spread of the baseline's launches alone keeps the interval
across the threshold, further repetitions of this launch change nothing, and it stops there.
Each repetition records latency mean/median/p95/p99 from the server's answers, throughput,
duration, the stage durations the server reported and its peak memory figure.

Verdict (the rule of :mod:`omniqual.loadgen.regression`): the two-sided ``confidence`` interval
on the relative change of the repetitions' mean of the baseline's metric against the mean of
the server launches the baseline was set from, as wide as one new launch may fall from them
(this run is one launch; a baseline of fewer than three launches judges nothing), decides:

* ``failed`` when the whole interval lies beyond the baseline's threshold in the bad direction;
* ``passed`` when the whole interval lies inside it (no regression beyond the threshold at that
  confidence);
* otherwise more repetitions, and at the ceiling (or where more cannot decide) ``invalid:
  inconclusive`` with the interval.

Never a flake: a noisy host yields ``invalid``, not a verdict. When the server runs on the
measuring host, the host's speed is read before the measured repetitions and after each (a
fixed reference workload, the medians of the first and second half of the readings, and
hypervisor steal during them; :mod:`omniqual.loadgen.host_speed`): a host
slower or faster than when the baseline was set, or one that changed speed during the run, is
``invalid`` naming the readings (:mod:`omniqual.checks.perf.host`), never a regression of the
build. Any failed request fails the gate
(errors are findings). No baseline for the row's hardware, serve configuration and work is
``invalid: no baseline for this hardware/config``; the repetitions (up to ``max_repetitions``
within the budget) are still recorded, so a baseline can be set from the result. A pass counts
for a row only beside a passed correctness gate of the same deployment: the rule table
(:mod:`omniqual.domain.rules`) enforces it.

Evidence: the raw result JSON (``perf-result.json``, vLLM-Omni field names, the environment
fingerprint and provenance) and the per-request records of every repetition (JSONL).
"""

import asyncio
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal

from omniqual.checks.base import CheckContext, CheckOutcome
from omniqual.checks.load_binding import endpoint_for
from omniqual.checks.perf.host import host_reason
from omniqual.checks.perf.judge import (
    BaselineLookup,
    find_baseline,
    judge,
    repetitions_cannot_decide,
    serve_identity,
)
from omniqual.checks.perf.params import PerfParams, workload_sha256
from omniqual.checks.perf.record import result_document
from omniqual.checks.perf.upstream import apply_config
from omniqual.checks.perf.work import Repetition, run_repetition
from omniqual.checks.workload_budget import HOST_TOO_SLOW
from omniqual.client import OmniClient
from omniqual.domain.evidence import Measurement
from omniqual.domain.outcomes import GateOutcome
from omniqual.loadgen.host_speed import SETTLE_S, CpuTimes, HostSpeed, reference_workload_s
from omniqual.loadgen.regression import Comparison, Decision
from omniqual.loadgen.workload import EndpointKind

Fingerprint = Callable[[], Mapping[str, Any]]


def _host_fingerprint() -> Mapping[str, Any]:
    from omniqual.deploy.fingerprint import collect_fingerprint

    return collect_fingerprint().model_dump(mode="json")


class PerfCheck:
    kind: ClassVar[str] = "perf"
    params_model: ClassVar[type[PerfParams]] = PerfParams
    needs: ClassVar[Literal["server", "checkpoint", "launches"]] = "server"
    measures: ClassVar[bool] = True  # request latency and throughput

    def __init__(self, fingerprint: Fingerprint = _host_fingerprint,
                 host_probe: Callable[[], float] = reference_workload_s,
                 cpu_times: Callable[[], CpuTimes] = CpuTimes.now,
                 settle_s: float = SETTLE_S) -> None:  # fmt: skip
        self.fingerprint = fingerprint
        self.host_probe, self.cpu_times, self.settle_s = host_probe, cpu_times, settle_s

    async def run(self, ctx: CheckContext, params: PerfParams) -> CheckOutcome:
        api_mode = ctx.row.get("api_mode")
        endpoint = endpoint_for(api_mode)
        if endpoint is None:
            return CheckOutcome(GateOutcome.SKIPPED, (f"api_mode {api_mode!r} has no HTTP "
                                                      "endpoint to measure",))  # fmt: skip
        params, template = apply_config(params, ctx)
        async with ctx.make_client() as client:
            health = await client.send_raw("GET", "/health", timeout_s=10.0)
            if health.status != 200:
                return CheckOutcome(GateOutcome.FAILED, (f"before the work: GET /health "
                                                         f"{health.status}",))  # fmt: skip
            # Fresh readings per run: one check instance may run several rows and targets.
            host = _HostReadings(self.host_probe, self.cpu_times, self.settle_s)
            return await _Perf(ctx, params, endpoint, client, template, self.fingerprint,
                               host).run()  # fmt: skip


class _HostReadings:
    """The host speed readings around the measured repetitions (server on this host only)."""

    def __init__(self, probe: Callable[[], float], cpu_times: Callable[[], CpuTimes],
                 settle_s: float) -> None:  # fmt: skip
        self.probe, self.cpu_times, self.settle_s = probe, cpu_times, settle_s
        self.readings: list[float] = []
        self.started: CpuTimes | None = None

    async def read(self) -> None:
        """One reading, once the server's workers are idle. Blocking on purpose (~0.1 s): no
        request is in flight, and the probe must not share the CPU with this process's own
        event loop work."""
        if self.started is None:
            self.started = self.cpu_times()
        await asyncio.sleep(self.settle_s)
        self.readings.append(self.probe())

    def finish(self) -> HostSpeed | None:
        if self.started is None or len(self.readings) < 2:
            return None
        steal = self.cpu_times().steal_fraction_since(self.started)
        return HostSpeed.of(self.readings, steal)


class _Perf:
    def __init__(self, ctx: CheckContext, params: PerfParams, endpoint: EndpointKind,
                 client: OmniClient, template: dict[str, Any], fingerprint: Fingerprint,
                 host: _HostReadings) -> None:  # fmt: skip
        self.ctx, self.params, self.endpoint, self.client = ctx, params, endpoint, client
        self.template, self.fingerprint, self.host = template, fingerprint, host
        self.speed: HostSpeed | None = None
        self.reps: list[Repetition] = []
        self.rows: list[bytes] = []
        self.loop = asyncio.get_running_loop()
        self.started = self.loop.time()

    async def _repetition(self, warmup: bool) -> Repetition:
        index = len(self.reps)
        measured = sum(not r.warmup for r in self.reps)
        what = "warm-up" if warmup else f"repetition {measured + 1}"
        self.ctx.progress(f"perf: {what}", None)
        rep, run = await run_repetition(self.client, self.params, self.endpoint, index, warmup)
        self.reps.append(rep)
        for row in run.rows():
            line = {"repetition": index, "warmup": warmup, **row.model_dump(mode="json")}
            self.rows.append(json.dumps(line, sort_keys=True).encode() + b"\n")
        return rep

    def _fits(self, more: int) -> bool:
        budget = self.ctx.gate.budget_s
        if budget is None:
            return True
        longest = max(r.duration for r in self.reps)
        return self.loop.time() - self.started + more * longest <= budget

    async def run(self) -> CheckOutcome:
        ctx, params = self.ctx, self.params
        hardware = ctx.row.get("hardware")
        workload = workload_sha256(params, self.endpoint.value)
        recipe = ctx.target.recipe.id if ctx.target.recipe is not None else None
        identity = serve_identity(ctx.provenance, recipe)
        lookup = (find_baseline(ctx.project_root / params.baselines_dir, ctx.row, hardware,
                                identity, workload)
                  if hardware else None)  # fmt: skip
        failures: list[str] = []
        invalid: list[str] = [] if hardware else ["the row names no hardware: no baseline applies"]
        for _ in range(params.warmup_repetitions):
            await self._repetition(warmup=True)
        if self.reps and not self._fits(params.min_repetitions):
            invalid.insert(0, f"{HOST_TOO_SLOW} (measured: a warm-up repetition took "
                              f"{self.reps[-1].duration:.1f} s; {params.min_repetitions} more do "
                              f"not fit the gate's budget of {ctx.gate.budget_s:g} s)")  # fmt: skip
            return self._outcome(GateOutcome.INVALID, invalid, lookup, None, workload, identity)
        # The reference workload runs on the server's CPUs only when the server is on this host.
        probing = self.ctx.target.pid is not None and self.ctx.target.agent is None
        if probing:
            await self.host.read()
        comparison = None
        settled: str | None = None
        while True:
            rep = await self._repetition(warmup=False)
            if probing:
                await self.host.read()
            if rep.failed_requests:
                failures.append(f"repetition {rep.index}: {rep.failed_requests} of "
                                f"{params.requests} requests failed ({', '.join(rep.errors)})")
                break
            measured = self._values(lookup)
            if len(measured) < params.min_repetitions:
                continue
            if lookup is None or lookup.baseline is None:
                # Nothing to judge: measure up to the ceiling, so a baseline set from this
                # result knows its spread from as many repetitions as the budget allows.
                if len(measured) >= params.max_repetitions or not self._fits(1):
                    break
                continue
            comparison = judge(measured, lookup.baseline, params.confidence)
            if comparison.decision is not Decision.UNDECIDED:
                break
            # Repetitions narrow only this launch's own term; past that, the budget buys nothing.
            settled = repetitions_cannot_decide(measured, lookup.baseline, params.confidence)
            if (settled is not None or len(measured) >= params.max_repetitions
                    or not self._fits(1)):
                break
        self.speed = self.host.finish()
        baseline = lookup.baseline if lookup else None
        host_why = None if failures else host_reason(self.speed, baseline, params)
        if failures:
            outcome = GateOutcome.FAILED
        elif host_why is not None and comparison is not None:
            outcome = GateOutcome.INVALID
            invalid.append(f"{host_why}; the comparison is recorded but does not judge: "
                           f"{baseline.metric if baseline else 'metric'} "
                           f"{comparison.describe()}")  # fmt: skip
        elif lookup is None or lookup.baseline is None or comparison is None:
            outcome = GateOutcome.INVALID
            invalid.append(lookup.why_not if lookup and lookup.why_not else "no comparison made")
            if host_why is not None:  # a baseline set from this result would inherit it
                invalid.append(host_why)
        elif comparison.decision is Decision.REGRESSED:
            outcome = GateOutcome.FAILED
            failures.append(f"{lookup.baseline.metric} regressed: {comparison.describe()}")
        elif comparison.decision is Decision.WITHIN:
            outcome = GateOutcome.PASSED
        else:
            outcome = GateOutcome.INVALID
            ceiling = (settled if settled is not None else "max_repetitions reached"
                       if len(self._values(lookup)) >= params.max_repetitions
                       else "the gate's budget allows no more")
            invalid.append(f"inconclusive after {len(self._values(lookup))} repetitions "
                           f"({ceiling}): {lookup.baseline.metric} {comparison.describe()}")
        return self._outcome(outcome, failures + invalid, lookup, comparison, workload, identity)

    def _metric(self, lookup: BaselineLookup | None) -> str:
        return lookup.baseline.metric if lookup and lookup.baseline else "latency_mean"

    def _values(self, lookup: BaselineLookup | None) -> list[float]:
        metric = self._metric(lookup)
        values = [r.metric(metric) for r in self.reps if not r.warmup]
        return [v for v in values if v is not None]

    def _outcome(self, outcome: GateOutcome, reasons: list[str], lookup: BaselineLookup | None,
                 comparison: Comparison | None, workload: str, identity: Any,
                 ) -> CheckOutcome:  # fmt: skip
        ctx, params = self.ctx, self.params
        metric = self._metric(lookup)
        values = self._values(lookup)
        judgement: dict[str, Any] = {
            "metric": metric, "values": values, "workload_sha256": workload,
            "hardware": ctx.row.get("hardware"), "serve": identity.model_dump(mode="json"),
            "baseline_path": str(_relative(lookup.path, ctx.project_root)) if lookup else None,
            "baseline": lookup.baseline.evidence.model_dump(mode="json")
            if lookup and lookup.baseline else None,
            "comparison": _comparison(comparison), "confidence": params.confidence,
            "host": self.speed.as_json() if self.speed else None,
            "outcome": outcome.value, "reasons": reasons,
        }  # fmt: skip
        measured = [r for r in self.reps if not r.warmup]
        document = result_document(params=params, row=ctx.row, repetitions=self.reps,
                                   template=self.template, provenance=ctx.provenance,
                                   environment=self.fingerprint(), judgement=judgement)  # fmt: skip
        put = ctx.artifacts.put_artifact
        artifacts = (
            put(json.dumps(document, indent=1, default=str).encode(),
                media_type="application/json", role="summary", name="perf-result.json"),
            put(b"".join(self.rows), media_type="application/x-ndjson", role="raw-requests",
                name="perf-requests.jsonl"),
        )  # fmt: skip
        measurements = [Measurement(name=f"{metric}.rep{i + 1}", value=v, unit="s")
                        for i, v in enumerate(values)]  # fmt: skip
        result = document["result"]
        for name, unit in (("latency_mean", "s"), ("latency_p95", "s"),
                           ("throughput_qps", "1/s"), ("peak_memory_mb_max", "MiB")):  # fmt: skip
            if result.get(name) is not None:
                total = sum(r.completed_requests for r in measured)
                measurements.append(Measurement(name=name, value=result[name], unit=unit,
                                                samples=total))  # fmt: skip
        if self.speed is not None:  # what the host was doing, beside what the server did
            measurements += [
                Measurement(name="host_reference_workload_before", value=self.speed.probe_before_s,
                            unit="s"),
                Measurement(name="host_reference_workload_after", value=self.speed.probe_after_s,
                            unit="s"),
                Measurement(name="host_steal_fraction", value=self.speed.steal_fraction, unit="1"),
            ]  # fmt: skip
        if comparison is not None:
            measurements.append(Measurement(
                name="relative_change", value=comparison.change, unit="1", samples=len(values),
                bound=comparison.threshold, ok=comparison.decision is Decision.WITHIN))  # fmt: skip
        return CheckOutcome(
            outcome, tuple(reasons), tuple(measurements), artifacts,
            requested={"requests": params.requests, "concurrency": params.concurrency,
                       "arrival_rps": params.arrival_rps,
                       "min_repetitions": params.min_repetitions,
                       "max_repetitions": params.max_repetitions},
            effective={"perf": judgement, "repetitions": len(measured)},
        )  # fmt: skip


def _comparison(c: Comparison | None) -> dict[str, Any] | None:
    if c is None:
        return None
    return {"change": c.change, "low": c.low, "high": c.high, "df": c.df,
            "threshold": c.threshold, "direction": c.direction.value,
            "decision": c.decision.value}  # fmt: skip


def _relative(path: Path, root: Path) -> Path:
    try:
        return path.resolve().relative_to(root.resolve())
    except ValueError:
        return path
