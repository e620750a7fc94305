"""Setting a perf baseline from a recorded perf result (``omniqual perf baseline update``).

The new baseline takes the result's repetitions of its metric, its row, hardware, serve
identity and workload hash; metric, direction and threshold carry over from the file it replaces
(or the defaults for a first baseline). It never silently replaces a baseline of another serve
configuration, row or metric: that is refused with the reason (hardware is in the file name, so
another hardware is another file). The caller shows :attr:`BaselineUpdate.diff` for review.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from omniqual.domain.axes import RowKey, Selector
from omniqual.domain.result import GateResult
from omniqual.evidence.run_reader import read_run
from omniqual.loadgen.host_speed import CHANGED_DURING, CONTENDED
from omniqual.specs.perf_baseline import (
    BaselineEvidence,
    PerfBaseline,
    ServeIdentity,
    baseline_diff,
    baseline_path,
    dump_baseline,
    load_baseline,
)

DEFAULT_METRIC = "latency_mean"
DEFAULT_THRESHOLD = 0.10
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


def plan_update(result: GateResult, directory: Path, owner: str | None) -> BaselineUpdate:
    perf = result.effective.get("perf")
    if not isinstance(perf, dict):
        raise ValueError(f"result {result.result_id} records no perf repetitions")
    row = RowKey.parse(result.row)
    hardware = perf.get("hardware")
    if not isinstance(hardware, str):
        raise ValueError(f"result {result.result_id}: its row names no hardware")
    path = baseline_path(directory, row, hardware)
    old = load_baseline(path) if path.is_file() else None
    metric = old.metric if old else DEFAULT_METRIC
    if perf.get("metric") != metric:
        raise BaselineRefused(f"{path} judges {metric}; result {result.result_id} measured "
                              f"{perf.get('metric')}")  # fmt: skip
    values = _floats(perf.get("values"))
    if len(values) < 2:
        raise ValueError(f"result {result.result_id} has {len(values)} repetition(s); a "
                         "baseline needs at least 2 (a spread)")  # fmt: skip
    serve = ServeIdentity.model_validate(perf.get("serve") or {})
    if old is not None:
        moved = old.serve.mismatch(serve)
        if moved is not None:
            raise BaselineRefused(f"{path} belongs to another serve configuration ({moved}); a "
                                  "new serve config needs its own row, or remove the file "
                                  "deliberately")  # fmt: skip
        if old.row != result.row or old.hardware != hardware:
            raise BaselineRefused(f"{path} is for row {old.row} on {old.hardware}")
    host = perf.get("host")
    probe_s, steal, workload = (host.get("probe_s"), host.get("steal_fraction"),
                                host.get("workload")) if isinstance(host, dict) else (
        None, None, None)  # fmt: skip
    unsteady = [r for r in _strings(perf.get("reasons")) if r.startswith(UNSTEADY_PREFIXES)]
    if unsteady:
        raise BaselineRefused(f"result {result.result_id} was measured on a host that was not "
                              f"steady ({unsteady[0]}): measure again on a quiet host")  # fmt: skip
    mean = sum(values) / len(values)
    stdev = (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5
    new = PerfBaseline(
        row=result.row, hardware=hardware, gate=result.gate_id, metric=metric,
        unit="1/s" if metric == "throughput_qps" else "s",
        direction=old.direction if old else ("higher" if metric == "throughput_qps" else "lower"),
        threshold=old.threshold if old else DEFAULT_THRESHOLD,
        owner=owner or (old.owner if old else "unowned"), serve=serve,
        workload_sha256=str(perf.get("workload_sha256")),
        evidence=BaselineEvidence(run_id=result.run_id, result_id=result.result_id,
                                  set_at=result.finished_at, repetitions=tuple(values),
                                  mean=mean, stdev=stdev, host_probe_s=_positive(probe_s),
                                  host_probe_workload=(workload if isinstance(workload, str)
                                                       and probe_s is not None else None),
                                  host_steal_fraction=_positive(steal, zero=True)),
    )  # fmt: skip
    return BaselineUpdate(path, old, new, tuple(baseline_diff(old, new)))


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
