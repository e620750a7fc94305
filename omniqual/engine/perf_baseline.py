"""Setting a perf baseline from recorded perf results (``omniqual perf baseline update``).

The new baseline takes the results' repetitions of its metric (at least
:data:`~omniqual.specs.perf_baseline.MIN_LAUNCHES` results, each from its own run: one server
launch each, and the mean of each launch is kept), their row, hardware, serve identity and
workload hash, which must agree; metric, direction and threshold carry over from the file it
replaces (or the defaults for a first baseline). It never silently replaces a baseline of
another serve configuration, row or metric: that is refused with the reason (hardware is in the
file name, so another hardware is another file). The caller shows :attr:`BaselineUpdate.diff`
for review.
"""

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from omniqual.checks.perf.params import PerfParams
from omniqual.domain.axes import RowKey, Selector
from omniqual.domain.result import GateResult
from omniqual.evidence.run_reader import read_run
from omniqual.loadgen.host_speed import CHANGED_DURING, CONTENDED
from omniqual.specs.perf_baseline import (
    MIN_LAUNCHES,
    BaselineEvidence,
    BaselineLaunch,
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
        self.path.write_text(dump_baseline(self.new), encoding="utf-8")


def latest_perf_result(run_dir: Path, selector: Selector) -> GateResult:
    run = read_run(run_dir)
    found = [r for r in run.results
             if r.gate_kind == "perf" and selector.matches(RowKey.parse(r.row))]  # fmt: skip
    if not found:
        raise ValueError(f"{run_dir} holds no perf result on a row matching {selector}")
    rows = sorted({r.row for r in found})
    if len(rows) > 1:
        raise ValueError(f"--row {selector} matches {len(rows)} rows in {run_dir}; name one: "
                         + "; ".join(rows))  # fmt: skip
    return max(found, key=lambda r: r.finished_at)


@dataclass(frozen=True, slots=True)
class _Launch:
    """One recorded perf result read for a baseline: one server launch."""

    result: GateResult
    hardware: str
    values: tuple[float, ...]
    serve: ServeIdentity
    workload_sha256: str
    probe_s: float | None
    probe_workload: str | None
    steal: float | None


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
    probe_s, steal, workload = (host.get("probe_s"), host.get("steal_fraction"),
                                host.get("workload")) if isinstance(host, dict) else (
        None, None, None)  # fmt: skip
    # A run judged by an earlier baseline reads steal against that one's: read it plainly here.
    if isinstance(steal, int | float) and steal > STEAL_TOLERANCE:
        raise BaselineRefused(f"result {result.result_id} was measured on a host that was not "
                              f"steady (the hypervisor stole {steal:.1%} of CPU time during it, "
                              f"tolerance {STEAL_TOLERANCE:.0%}): measure again on a quiet "
                              "host")  # fmt: skip
    return _Launch(result, hardware, tuple(values),
                   ServeIdentity.model_validate(perf.get("serve") or {}),
                   str(perf.get("workload_sha256")), _positive(probe_s),
                   workload if isinstance(workload, str) and _positive(probe_s) else None,
                   _positive(steal, zero=True))  # fmt: skip


def plan_update(results: Sequence[GateResult], directory: Path,
                owner: str | None) -> BaselineUpdate:  # fmt: skip
    """A baseline from perf results of one row, each its own server launch (run)."""
    if not results:
        raise ValueError("no perf result to set a baseline from")
    latest = max(results, key=lambda r: r.finished_at)
    row = RowKey.parse(latest.row)
    first = _read_launch(latest, None)  # its hardware names the file; the metric comes next
    path = baseline_path(directory, row, first.hardware)
    old = load_baseline(path) if path.is_file() else None
    metric = old.metric if old else DEFAULT_METRIC
    launches = [_read_launch(r, metric) for r in results]
    _same_deployment_and_work(launches, path)
    runs = [launch.result.run_id for launch in launches]
    if len(set(runs)) != len(runs):
        raise BaselineRefused("two results come from the same run: each launch of the server "
                              "counts once (give one run directory per launch)")  # fmt: skip
    if len(launches) < MIN_LAUNCHES:
        raise BaselineRefused(f"{len(launches)} run(s) given; a baseline needs at least "
                              f"{MIN_LAUNCHES} server launches (one `--from` per run) to know "
                              "how far launches of one build differ")  # fmt: skip
    if old is not None:
        moved = old.serve.mismatch(first.serve)
        if moved is not None:
            raise BaselineRefused(f"{path} belongs to another serve configuration ({moved}); a "
                                  "new serve config needs its own row, or remove the file "
                                  "deliberately")  # fmt: skip
        if old.row != latest.row or old.hardware != first.hardware:
            raise BaselineRefused(f"{path} is for row {old.row} on {old.hardware}")
    values = [v for launch in launches for v in launch.values]
    probes = [launch.probe_s for launch in launches]
    steals = [launch.steal for launch in launches]
    probed = None not in probes and len({launch.probe_workload for launch in launches}) == 1
    new = PerfBaseline(
        row=latest.row, hardware=first.hardware, gate=latest.gate_id, metric=metric,
        unit="1/s" if metric == "throughput_qps" else "s",
        direction=old.direction if old else ("higher" if metric == "throughput_qps" else "lower"),
        threshold=old.threshold if old else DEFAULT_THRESHOLD,
        owner=owner or (old.owner if old else "unowned"), serve=first.serve,
        workload_sha256=first.workload_sha256,
        evidence=BaselineEvidence(
            run_id=latest.run_id, result_id=latest.result_id, set_at=latest.finished_at,
            repetitions=tuple(values), mean=statistics.fmean(values),
            stdev=statistics.stdev(values),
            host_probe_s=statistics.median(p for p in probes if p) if probed else None,
            host_probe_workload=first.probe_workload if probed else None,
            host_steal_fraction=(statistics.median(s for s in steals if s is not None)
                                 if probed and None not in steals else None),
            launches=tuple(BaselineLaunch(
                run_id=launch.result.run_id, result_id=launch.result.result_id,
                mean=statistics.fmean(launch.values), repetitions=len(launch.values),
                host_probe_s=launch.probe_s, host_steal_fraction=launch.steal)
                for launch in sorted(launches, key=lambda x: x.result.finished_at)),
        ),
    )  # fmt: skip
    return BaselineUpdate(path, old, new, tuple(baseline_diff(old, new)))


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
