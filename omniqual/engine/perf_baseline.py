"""Setting a perf baseline from recorded perf results (``omniqual perf baseline update``).

The new baseline takes the results' repetitions of its metric (at least
:data:`~omniqual.specs.perf_baseline.MIN_LAUNCHES` results, each from its own run, spread over
time; a run of the perf gate holds one or more server launches, and each launch is kept with
its mean), their row, hardware, serve identity and workload hash, which must agree; metric and
direction carry over from the file it replaces, the threshold too unless one is given (the
defaults for a first baseline). With ``keep``, the file's own launches stay and the new runs'
are added to them: launches of one session follow one another within minutes on one machine,
so a baseline that spans days (and the hosts of its class a session lands on) is what a later
run on any of them should be judged against.

It states what its sessions can resolve (:func:`omniqual.loadgen.sessions.session_resolution`,
with the launches per run, repetitions per launch and confidence the latest result's gate used)
and refuses a threshold below the smallest it can hold, naming that one. It never silently
replaces a baseline of another serve configuration, row or metric: that is refused with the
reason (hardware is in the file name, so another hardware is another file). The caller shows
:attr:`BaselineUpdate.diff` for review.
"""

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from omniqual.checks.perf.params import PerfParams
from omniqual.domain.axes import RowKey, Selector
from omniqual.domain.result import GateResult
from omniqual.engine.perf_baseline_note import resolution_note
from omniqual.evidence.run_reader import read_run
from omniqual.loadgen.host_speed import CHANGED_DURING, CONTENDED
from omniqual.loadgen.sessions import (
    SessionLaunch,
    session_resolution,
    sessions,
)
from omniqual.specs.perf_baseline import (
    MIN_LAUNCHES,
    BaselineEvidence,
    BaselineLaunch,
    BaselineResolution,
    PerfBaseline,
    ServeIdentity,
    baseline_diff,
    baseline_path,
    dump_baseline,
    load_baseline,
)

DEFAULT_METRIC = "latency_mean"
DEFAULT_THRESHOLD = 0.10
STEAL_TOLERANCE = PerfParams.model_fields["steal_tolerance"].default
UNSTEADY_PREFIXES = (CHANGED_DURING, CONTENDED)
"""The perf gate's reasons for a host that changed under the measurement."""


class BaselineRefused(ValueError):
    """The update would replace a baseline it must not (another serve config, row or metric)."""


@dataclass(frozen=True, slots=True)
class BaselineUpdate:
    path: Path
    old: PerfBaseline | None
    new: PerfBaseline
    diff: tuple[str, ...]

    def write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(dump_baseline(self.new, resolution_note(self.new)),
                             encoding="utf-8")  # fmt: skip


def latest_perf_result(
    run_dir: Path, selector: Selector, defaults: Mapping[str, str] | None = None
) -> GateResult:
    """The run's latest perf result on the one row ``selector`` names; ``defaults`` are the
    catalogue's axis defaults, which recorded row keys leave out."""
    run = read_run(run_dir)
    found = [
        r for r in run.results
        if r.gate_kind == "perf" and selector.matches(RowKey.parse(r.row, defaults))
    ]  # fmt: skip
    if not found:
        raise ValueError(f"{run_dir} holds no perf result on a row matching {selector}")
    rows = sorted({r.row for r in found})
    if len(rows) > 1:
        raise ValueError(f"--row {selector} matches {len(rows)} rows in {run_dir}; name one: "
                         + "; ".join(rows))  # fmt: skip
    return max(found, key=lambda r: r.finished_at)


@dataclass(frozen=True, slots=True)
class _Launch:
    """One recorded perf result read for a baseline: its run's launches (each its repetitions
    and, where probed, its host reading)."""

    result: GateResult
    hardware: str
    values: tuple[float, ...]
    serve: ServeIdentity
    workload_sha256: str
    probe_s: float | None
    probe_workload: str | None
    steal: float | None
    launches: tuple[tuple[tuple[float, ...], float | None], ...] = ()
    per_run: int = 1
    repetitions_per_launch: int | None = None
    confidence: float = 0.95
    cpu_class: str | None = None

    def split(self) -> tuple[tuple[tuple[float, ...], float | None], ...]:
        """Each launch of the run: its values and host reading (a run recorded before runs
        held several launches is one)."""
        return self.launches or ((self.values, self.probe_s),)


def _read_launch(result: GateResult, metric: str | None) -> _Launch:
    perf = result.effective.get("perf")
    if not isinstance(perf, dict):
        raise ValueError(f"result {result.result_id} records no perf repetitions")
    hardware = perf.get("hardware")
    if not isinstance(hardware, str):
        raise ValueError(f"result {result.result_id}: its row names no hardware")
    if metric is not None and perf.get("metric") != metric:
        raise BaselineRefused(f"the baseline judges {metric}; result {result.result_id} "
                              f"measured {perf.get('metric')}")  # fmt: skip
    values = _floats(perf.get("values"))
    if len(values) < 2:
        raise ValueError(f"result {result.result_id} has {len(values)} repetition(s); a "
                         "baseline needs at least 2 (a spread)")  # fmt: skip
    unsteady = [r for r in _strings(perf.get("reasons")) if r.startswith(UNSTEADY_PREFIXES)]
    if unsteady:
        raise BaselineRefused(f"result {result.result_id} was measured on a host that was not "
                              f"steady ({unsteady[0]}): measure again on a quiet host")  # fmt: skip
    host = perf.get("host")
    got = host if isinstance(host, dict) else {}
    probe_s, steal, workload, cpu = (got.get("probe_s"), got.get("steal_fraction"),
                                     got.get("workload"), got.get("cpu_class"))  # fmt: skip
    # A run judged by an earlier baseline reads steal against that one's: read it plainly here.
    if isinstance(steal, int | float) and steal > STEAL_TOLERANCE:
        raise BaselineRefused(f"result {result.result_id} was measured on a host that was not "
                              f"steady (the hypervisor stole {steal:.1%} of CPU time during it, "
                              f"tolerance {STEAL_TOLERANCE:.0%}): measure again on a quiet "
                              "host")  # fmt: skip
    recorded = perf.get("launches")
    launches = tuple((tuple(_floats(x.get("values"))), _positive(x.get("host_probe_s")))
                     for x in (recorded if isinstance(recorded, list) else ())
                     if isinstance(x, dict))  # fmt: skip
    if any(len(v) < 2 for v, _ in launches):
        raise ValueError(f"result {result.result_id} has a launch of fewer than 2 repetitions; "
                         "a baseline needs a spread in each")  # fmt: skip
    per_run, reps, confidence = (perf.get("launches_per_run"), perf.get("repetitions_per_launch"),
                                 perf.get("confidence"))  # fmt: skip
    return _Launch(result, hardware, tuple(values),
                   ServeIdentity.model_validate(perf.get("serve") or {}),
                   str(perf.get("workload_sha256")), _positive(probe_s),
                   workload if isinstance(workload, str) and _positive(probe_s) else None,
                   _positive(steal, zero=True), launches,
                   per_run if isinstance(per_run, int) and per_run >= 1 else 1,
                   reps if isinstance(reps, int) and reps >= 2 else None,
                   confidence if isinstance(confidence, float) and 0.5 < confidence < 1
                   else 0.95,
                   cpu if isinstance(cpu, str) and _positive(probe_s) else None)  # fmt: skip


@dataclass(frozen=True, slots=True)
class _Measured:
    """One server launch a baseline is set from: read from a result, or kept from the file."""

    run_id: str
    result_id: str
    number: int
    values: tuple[float, ...]
    probe_s: float | None
    steal: float | None


def _kept(old: PerfBaseline, path: Path) -> list[_Measured]:
    """The file's launches with their repetitions (kept in launch order, one flat list)."""
    values, launches = old.evidence.repetitions, old.evidence.launches
    if sum(x.repetitions for x in launches) != len(values):
        raise BaselineRefused(f"--add: {path}'s {len(values)} repetitions do not split into its "
                              f"{len(launches)} launches, so they cannot be kept: set it anew "
                              "from runs, without --add")  # fmt: skip
    kept, at = [], 0
    for x in launches:
        kept.append(_Measured(x.run_id, x.result_id, x.launch, values[at:at + x.repetitions],
                              x.host_probe_s, x.host_steal_fraction))  # fmt: skip
        at += x.repetitions
    return kept


def plan_update(results: Sequence[GateResult], directory: Path, owner: str | None,
                threshold: float | None = None, *, keep: bool = False) -> BaselineUpdate:
    """A baseline from perf results of one row, each its own run of one or more server
    launches (with ``keep``, added to the launches the file holds); ``threshold`` replaces the
    one kept (or the default)."""
    if not results:
        raise ValueError("no perf result to set a baseline from")
    latest = max(results, key=lambda r: r.finished_at)
    row = RowKey.parse(latest.row)
    first = _read_launch(latest, None)  # its hardware names the file; the metric comes next
    path = baseline_path(directory, row, first.hardware, first.cpu_class)
    old = load_baseline(path) if path.is_file() else None
    metric = old.metric if old else DEFAULT_METRIC
    launches = [_read_launch(r, metric) for r in results]
    classes = sorted({launch.cpu_class or "an unrecorded class" for launch in launches})
    if len(classes) > 1:
        raise BaselineRefused("the runs were measured on hosts of different CPU classes ("
                              + "; ".join(classes) + "): a baseline is set on one class of "
                              "host, from runs on that class")  # fmt: skip
    _same_deployment_and_work(launches, path)
    if keep and old is None:
        raise BaselineRefused(f"--add: {path} does not exist yet; set it from runs first")
    kept = _kept(old, path) if keep and old is not None else []
    if keep and old is not None and old.evidence.host_cpu_class != first.cpu_class:
        theirs = old.evidence.host_cpu_class or "an unrecorded class"
        raise BaselineRefused(f"--add: {path} was set on {theirs}, these runs on {classes[0]}: "
                              "a baseline is set on one class of host")  # fmt: skip
    runs = [launch.result.run_id for launch in launches]
    if len(set(runs)) != len(runs) or set(runs) & {m.run_id for m in kept}:
        raise BaselineRefused("two results come from the same run (or a run the baseline "
                              "already holds): each launch of the server counts once (give one "
                              "run directory per launch)")  # fmt: skip
    # Runs, not only launches: launches of one run follow one another within minutes, and
    # launches spread over time are what a later run is judged against.
    if len(launches) + len({m.run_id for m in kept}) < MIN_LAUNCHES:
        raise BaselineRefused(f"{len(launches)} run(s) given; a baseline needs at least "
                              f"{MIN_LAUNCHES} server launches from as many runs (one `--from` "
                              "per run, spread over time) to know how far launches of one "
                              "build differ")  # fmt: skip
    if old is not None:
        moved = old.serve.mismatch(first.serve)
        if moved is not None:
            raise BaselineRefused(f"{path} belongs to another serve configuration ({moved}); a "
                                  "new serve config needs its own row, or remove the file "
                                  "deliberately")  # fmt: skip
        if old.row != latest.row or old.hardware != first.hardware:
            raise BaselineRefused(f"{path} is for row {old.row} on {old.hardware}")
    ordered = sorted(launches, key=lambda x: x.result.finished_at)
    each = kept + [_Measured(run.result.run_id, run.result.result_id, n + 1, values, probe,
                             run.steal)
                   for run in ordered for n, (values, probe) in enumerate(run.split())]  # fmt: skip
    values = [v for m in each for v in m.values]
    probes = [m.probe_s for m in each]
    steals = [m.steal for m in each]
    workloads = {launch.probe_workload for launch in launches} | (
        {old.evidence.host_probe_workload} if kept and old is not None else set())  # fmt: skip
    probed = None not in probes and len(workloads) == 1
    newest = next(launch for launch in launches if launch.result is latest)
    stated = _resolution(newest, each)
    held = threshold if threshold is not None else old.threshold if old else DEFAULT_THRESHOLD
    if held < stated.min_threshold:
        floor = math.ceil(stated.min_threshold * 100) / 100
        raise BaselineRefused(
            f"threshold {held:.0%} is below what this baseline's sessions can resolve: "
            f"with {stated.launches_per_run} launch(es) per run at {stated.confidence:.0%} it "
            f"can hold {floor:.0%} or more (an unchanged server's typical interval is "
            f"±{stated.min_threshold:.1%}); pass --threshold {floor:g} or more, or set it from "
            "more launches")  # fmt: skip
    new = PerfBaseline(
        row=latest.row, hardware=first.hardware, gate=latest.gate_id, metric=metric,
        unit="1/s" if metric == "throughput_qps" else "s",
        direction=old.direction if old else ("higher" if metric == "throughput_qps" else "lower"),
        threshold=held, owner=owner or (old.owner if old else "unowned"), serve=first.serve,
        workload_sha256=first.workload_sha256,
        evidence=BaselineEvidence(
            run_id=latest.run_id, result_id=latest.result_id, set_at=latest.finished_at,
            repetitions=tuple(values), mean=statistics.fmean(values),
            stdev=statistics.stdev(values),
            host_probe_s=statistics.median(p for p in probes if p) if probed else None,
            host_probe_workload=first.probe_workload if probed else None,
            host_cpu_class=first.cpu_class if probed else None,
            host_steal_fraction=(statistics.median(s for s in steals if s is not None)
                                 if probed and None not in steals else None),
            launches=tuple(BaselineLaunch(
                run_id=m.run_id, result_id=m.result_id, launch=m.number,
                mean=statistics.fmean(m.values), repetitions=len(m.values),
                host_probe_s=m.probe_s, host_steal_fraction=m.steal) for m in each),
        ),
        resolution=stated.model_copy(update={"detects": held + stated.min_threshold}),
    )  # fmt: skip
    return BaselineUpdate(path, old, new, tuple(baseline_diff(old, new)))


def _resolution(run: _Launch, each: Sequence[_Measured]) -> BaselineResolution:
    """What the launches (``each``, grouped by run into sessions) can resolve with ``run``'s (the
    latest result's) launches per run, repetitions per launch and confidence (see
    :mod:`omniqual.loadgen.sessions`)."""
    launches = [m.values for m in each]
    reps = run.repetitions_per_launch or min(len(v) for v in launches)
    # One repetition's spread within a launch, pooled over the launches.
    within = sum((len(v) - 1) * statistics.variance(v) for v in launches)
    within_sd = math.sqrt(within / sum(len(v) - 1 for v in launches))
    groups = sessions([SessionLaunch(m.run_id, statistics.fmean(m.values)) for m in each])
    half = session_resolution(groups, within_sd=within_sd, per_run=run.per_run,
                              repetitions=reps, confidence=run.confidence)  # fmt: skip
    return BaselineResolution(launches_per_run=run.per_run, repetitions_per_launch=reps,
                              confidence=run.confidence, min_threshold=half,
                              detects=half)  # fmt: skip


def _same_deployment_and_work(launches: Sequence[_Launch], path: Path) -> None:
    first = launches[0]
    for launch in launches[1:]:
        theirs = launch.result.result_id
        if launch.result.row != first.result.row or launch.hardware != first.hardware:
            raise BaselineRefused(f"result {theirs} is of row {launch.result.row} on "
                                  f"{launch.hardware}, not of {first.result.row} on "
                                  f"{first.hardware}")  # fmt: skip
        if (moved := first.serve.mismatch(launch.serve)) is not None:
            raise BaselineRefused(f"result {theirs} ran another serve configuration ({moved})")
        if launch.workload_sha256 != first.workload_sha256:
            raise BaselineRefused(f"result {theirs} ran other work (workload "
                                  f"{launch.workload_sha256[:12]}, not "
                                  f"{first.workload_sha256[:12]}) for {path.name}")  # fmt: skip


def _positive(value: object, zero: bool = False) -> float | None:
    if isinstance(value, int | float) and (value > 0 or (zero and value == 0)):
        return float(value)
    return None


def _strings(value: object) -> list[str]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        return []
    return [v for v in value if isinstance(v, str)]


def _floats(value: object) -> list[float]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        return []
    return [float(v) for v in value if isinstance(v, int | float)]
