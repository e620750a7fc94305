"""What a perf run leaves behind: the raw result JSON (``perf-result.json``, vLLM-Omni field
names, every launch's repetitions, the judgement), the per-request records (JSONL), the server
logs of its launches, and the measurements a result carries.

A percentile is a measurement only where its samples support it (the sample-sufficiency rule of
soak and bench); the launch means, the host's readings and its ratio to the baseline's, and on a
GPU row the GPU's clocks are recorded beside what the server did.
"""

import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omniqual.checks.base import CheckContext, CheckOutcome
from omniqual.checks.perf.judge import BaselineLookup
from omniqual.checks.perf.params import PerfParams
from omniqual.checks.perf.record import result_document
from omniqual.checks.perf.work import PERCENTILE_FIELDS, Repetition
from omniqual.checks.workload_budget import HOST_TOO_SLOW
from omniqual.domain.evidence import Artifact, Measurement
from omniqual.domain.outcomes import GateOutcome
from omniqual.loadgen.host_speed import HostRatio, HostSpeed
from omniqual.loadgen.regression import Comparison, Decision
from omniqual.specs.perf_baseline import ServeIdentity


@dataclass
class LaunchRecord:
    """One server launch of a perf run: its repetitions and the host readings taken on it."""

    number: int
    reps: list[Repetition] = field(default_factory=list)
    readings: list[float] = field(default_factory=list)

    def values(self, metric: str) -> list[float]:
        found = [r.metric(metric) for r in self.reps if not r.warmup]
        return [v for v in found if v is not None]


@dataclass
class PerfFacts:
    """Everything a perf run found, for its outcome."""

    ctx: CheckContext
    params: PerfParams
    lookup: BaselineLookup | None
    identity: ServeIdentity
    workload: str
    metric: str
    template: dict[str, Any]
    environment: dict[str, Any]
    launches: list[LaunchRecord] = field(default_factory=list)
    rows: list[bytes] = field(default_factory=list)
    logs: list[Artifact] = field(default_factory=list)
    comparison: Comparison | None = None
    speed: HostSpeed | None = None
    ratio: HostRatio | None = None
    gpu: dict[str, Any] | None = None
    launch_note: str = ""

    def judged_launches(self) -> list[list[float]]:
        return [v for launch in self.launches if (v := launch.values(self.metric))]

    def values(self) -> list[float]:
        return [v for launch in self.judged_launches() for v in launch]

    def judged_probes(self) -> list[float]:
        """The reference workload's median beside each judged launch; empty unless every one
        of them was read."""
        judged = [launch for launch in self.launches if launch.values(self.metric)]
        if not judged or any(not launch.readings for launch in judged):
            return []
        return [statistics.median(launch.readings) for launch in judged]


def stopped_reason(facts: PerfFacts, settled: str | None, ceiling: int) -> str:
    """Why measuring stopped short of a decision (``settled``: more could not decide)."""
    if settled is not None:
        return settled
    if len(facts.launches) < ceiling:
        return "the gate's budget allows no more launches"
    if ceiling > 1:
        return "max_launches reached"
    if len(facts.launches[-1].values(facts.metric)) >= facts.params.max_repetitions:
        return "max_repetitions reached"
    return "the gate's budget allows no more"


def verdict(facts: PerfFacts, failures: list[str], invalid: list[str], host_why: str | None,
            stopped: str) -> tuple[GateOutcome, list[str]]:  # fmt: skip
    """The outcome and its reasons: failures beat everything, a host that keeps the baseline
    from judging (``host_why``) beats the comparison, and an undecided comparison is
    inconclusive, naming why measuring ``stopped``."""
    lookup, comparison = facts.lookup, facts.comparison
    baseline = lookup.baseline if lookup else None
    failures, invalid = list(failures), list(invalid)
    if failures:
        outcome = GateOutcome.FAILED
    elif invalid and invalid[0].startswith(HOST_TOO_SLOW):
        outcome = GateOutcome.INVALID
    elif host_why is not None and comparison is not None:
        outcome = GateOutcome.INVALID
        invalid.append(f"{host_why}; the comparison is recorded but does not judge: "
                       f"{facts.metric} {comparison.describe()}")  # fmt: skip
    elif baseline is None or comparison is None:
        outcome = GateOutcome.INVALID
        invalid.append(lookup.why_not if lookup and lookup.why_not else "no comparison made")
        if host_why is not None:  # a baseline set from this result would inherit it
            invalid.append(host_why)
    elif comparison.decision is Decision.REGRESSED:
        outcome = GateOutcome.FAILED
        failures.append(f"{facts.metric} regressed: {comparison.describe()}")
    elif comparison.decision is Decision.WITHIN:
        outcome = GateOutcome.PASSED
    else:
        outcome = GateOutcome.INVALID
        launches = facts.judged_launches()
        reps = sum(len(v) for v in launches)
        measured = (f"{reps} repetitions" if len(launches) == 1
                    else f"{len(launches)} launches ({reps} repetitions)")  # fmt: skip
        invalid.append(f"inconclusive after {measured} ({stopped}): {facts.metric} "
                       f"{comparison.describe()}")  # fmt: skip
    return outcome, failures + invalid


def launch_note(one_launch: bool, launches: int, made: int) -> str:
    """What the run's launches were, for its result."""
    if one_launch:
        return (f"one launch: a deployment given by URL is measured as it is, not launched "
                f"afresh (launches: {launches} applies to a launch recipe)")  # fmt: skip
    return f"{made} fresh launch(es) of the row's recipe, each stopped before the next"


def perf_outcome(facts: PerfFacts, outcome: GateOutcome, reasons: list[str]) -> CheckOutcome:
    ctx, params, lookup = facts.ctx, facts.params, facts.lookup
    reps = [r for launch in facts.launches for r in launch.reps]
    measured = [r for r in reps if not r.warmup]
    values = facts.values()
    judgement: dict[str, Any] = {
        "metric": facts.metric, "values": values, "workload_sha256": facts.workload,
        "hardware": ctx.row.get("hardware"), "serve": facts.identity.model_dump(mode="json"),
        "baseline_path": str(_relative(lookup.path, ctx.project_root)) if lookup else None,
        "baseline": lookup.baseline.evidence.model_dump(mode="json")
        if lookup and lookup.baseline else None,
        "comparison": _comparison(facts.comparison), "confidence": params.confidence,
        "launches": [_launch(launch, facts.metric) for launch in facts.launches],
        "launches_measured": len(facts.launches), "launches_per_run": params.launches,
        "repetitions_per_launch": params.min_repetitions, "launch_note": facts.launch_note,
        "host": _host(facts.speed, facts.ratio, params.confidence), "gpu": facts.gpu,
        "outcome": outcome.value, "reasons": reasons,
    }  # fmt: skip
    document = result_document(params=params, row=ctx.row, repetitions=reps,
                               template=facts.template, provenance=ctx.provenance,
                               environment=facts.environment, judgement=judgement)  # fmt: skip
    put = ctx.artifacts.put_artifact
    artifacts = (
        put(json.dumps(document, indent=1, default=str).encode(),
            media_type="application/json", role="summary", name="perf-result.json"),
        put(b"".join(facts.rows), media_type="application/x-ndjson", role="raw-requests",
            name="perf-requests.jsonl"),
        *facts.logs,
    )  # fmt: skip
    return CheckOutcome(
        outcome, tuple(reasons), tuple(_measurements(facts, document, measured)), artifacts,
        requested={"requests": params.requests, "concurrency": params.concurrency,
                   "arrival_rps": params.arrival_rps,
                   "min_repetitions": params.min_repetitions,
                   "max_repetitions": params.max_repetitions, "launches": params.launches,
                   "max_launches": params.launch_ceiling},
        effective={"perf": judgement, "repetitions": len(measured),
                   "launches": len(facts.launches)},
    )  # fmt: skip


def _measurements(facts: PerfFacts, document: dict[str, Any],
                  measured: list[Repetition]) -> list[Measurement]:  # fmt: skip
    metric, several = facts.metric, len(facts.launches) > 1
    found: list[Measurement] = []
    for launch in facts.launches:
        where = f".launch{launch.number}" if several else ""
        values = launch.values(metric)
        found += [Measurement(name=f"{metric}{where}.rep{i + 1}", value=v, unit="s")
                  for i, v in enumerate(values)]  # fmt: skip
        if several and values:
            found.append(Measurement(name=f"{metric}.launch{launch.number}",
                                     value=statistics.fmean(values), unit="s",
                                     samples=len(values)))  # fmt: skip
    result = document["result"]
    total = sum(r.completed_requests for r in measured)
    for name, unit in (("latency_mean", "s"), ("latency_p95", "s"), ("throughput_qps", "1/s"),
                       ("peak_memory_mb_max", "MiB")):  # fmt: skip
        value = result.get(name)
        if name in PERCENTILE_FIELDS and not isinstance(value, float):
            continue  # "insufficient (n < N)": no claim, no measurement
        if value is not None:
            found.append(Measurement(name=name, value=value, unit=unit, samples=total))
    speed = facts.speed
    if speed is not None:  # what the host was doing, beside what the server did
        found += [
            Measurement(name="host_reference_workload_before", value=speed.probe_before_s,
                        unit="s"),
            Measurement(name="host_reference_workload_after", value=speed.probe_after_s,
                        unit="s"),
            Measurement(name="host_steal_fraction", value=speed.steal_fraction, unit="1"),
        ]  # fmt: skip
    if facts.ratio is not None:
        found.append(Measurement(name="host_speed_ratio", value=facts.ratio.ratio, unit="1",
                                 samples=len(speed.readings) if speed else None))  # fmt: skip
    c = facts.comparison
    if c is not None:
        found.append(Measurement(
            name="relative_change", value=c.change, unit="1", samples=len(facts.values()),
            bound=c.threshold, ok=c.decision is Decision.WITHIN))  # fmt: skip
        if c.host_slope is not None:  # read at this host's reading through the baseline's fit
            found.append(Measurement(name="host_fit_slope", value=c.host_slope, unit="1",
                                     samples=len(facts.judged_launches())))  # fmt: skip
    return found


def _launch(launch: LaunchRecord, metric: str) -> dict[str, Any]:
    values = launch.values(metric)
    return {"launch": launch.number, "values": values,
            "mean": statistics.fmean(values) if values else None,
            "repetitions": len(values),
            "host_probe_s": statistics.median(launch.readings) if launch.readings else None,
            "host_readings": list(launch.readings)}  # fmt: skip


def _host(speed: HostSpeed | None, ratio: HostRatio | None,
          confidence: float) -> dict[str, Any] | None:  # fmt: skip
    if speed is None:
        return None
    block: dict[str, Any] = dict(speed.as_json())
    if ratio is not None:
        low, high = ratio.interval(confidence)
        block.update({"ratio": ratio.ratio, "ratio_interval": [low, high],
                      "differs": ratio.differs(confidence)})  # fmt: skip
    return block


def _comparison(c: Comparison | None) -> dict[str, Any] | None:
    if c is None:
        return None
    return {"change": c.change, "low": c.low, "high": c.high, "df": c.df,
            "threshold": c.threshold, "direction": c.direction.value,
            "decision": c.decision.value, "host_low": c.host_low, "host_high": c.host_high,
            "host_ratio": c.host_ratio, "host_slope": c.host_slope,
            "adjusted_by": c.adjusted_by}  # fmt: skip


def _relative(path: Path, root: Path) -> Path:
    try:
        return path.resolve().relative_to(root.resolve())
    except ValueError:
        return path
