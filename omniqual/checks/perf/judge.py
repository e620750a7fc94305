"""Which baseline may judge a perf run, and what it concludes.

A baseline judges a run only when it is the row's own file for the row's hardware and was set
on the same serve configuration (serve config hash and checkpoint hash, where recorded) and the
same work (workload hash). Anything else is ``invalid: no baseline for this hardware/config``,
never a verdict from a stranger's numbers. Nor does one set from fewer than
:data:`~omniqual.specs.perf_baseline.MIN_LAUNCHES` server launches: how far launches of one build
differ is what a run's launches are read against. Nor one whose metric is a percentile that a
repetition's sample count cannot support (the sample-sufficiency rule of soak and bench,
:mod:`omniqual.loadgen.sufficiency`): a p99 of 20 requests is no claim to judge. The comparison
itself is :func:`omniqual.loadgen.regression.compare_launches` (a prediction interval for the
mean of the run's launches against the owner's threshold, with the host's term where it
differs).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from omniqual.checks.perf.work import PERCENTILE_FIELDS
from omniqual.domain.axes import RowKey
from omniqual.domain.provenance import Provenance
from omniqual.domain.rules import UNKNOWN_VALUES
from omniqual.loadgen.host_fit import HostFit
from omniqual.loadgen.host_speed import HostRatio
from omniqual.loadgen.regression import (
    Comparison,
    Direction,
    Spread,
    compare_launches,
    launches_cannot_decide,
)
from omniqual.loadgen.sufficiency import DEFAULT_CONFIDENCE, required_samples
from omniqual.specs.perf_baseline import (
    MIN_LAUNCHES,
    PerfBaseline,
    ServeIdentity,
    baseline_path,
    load_baseline,
)
from omniqual.specs.source import SpecError

NO_BASELINE = "no baseline for this hardware/config"
FEW_LAUNCHES = "baseline set from too few launches"


def percentile_reason(metric: str, requests: int) -> str | None:
    """Why a repetition of ``requests`` samples supports no claim on ``metric``, or None."""
    percentile = PERCENTILE_FIELDS.get(metric)
    if percentile is None:
        return None
    needed = required_samples(percentile, confidence=DEFAULT_CONFIDENCE)
    if requests >= needed:
        return None
    return (f"{metric} is no claim: {requests} samples per repetition, and a p{percentile:g} "
            f"needs at least {needed} at {DEFAULT_CONFIDENCE:.0%} confidence (the "
            "sample-sufficiency rule of soak and bench): judge latency_mean, or raise the "
            "requests per repetition")  # fmt: skip


@dataclass(frozen=True, slots=True)
class BaselineLookup:
    path: Path
    baseline: PerfBaseline | None
    why_not: str | None
    """Why no baseline judges this run (the invalid reason), or None."""


def _known(value: str | None) -> str | None:
    return None if value is None or value in UNKNOWN_VALUES else value


def serve_identity(provenance: Provenance | None, recipe: str | None) -> ServeIdentity:
    p = provenance or Provenance()
    return ServeIdentity(recipe=recipe, serve_config_sha256=_known(p.serve_config_sha256),
                         checkpoint_sha256=_known(p.checkpoint_sha256),
                         vllm_omni_version=_known(p.vllm_omni_version))  # fmt: skip


def find_baseline(
    directory: Path, row: RowKey, hardware: str, identity: ServeIdentity, workload: str,
    cpu_class: str | None = None,
) -> BaselineLookup:
    """The baseline that may judge this run: with the server on this host (``cpu_class``, its
    CPU class), the one set on this class of host, else the row's plain file (whose recorded
    class :func:`omniqual.checks.perf.host.host_reason` still holds against this host's)."""
    path = baseline_path(directory, row, hardware)
    if cpu_class is not None and (own := baseline_path(directory, row, hardware,
                                                        cpu_class)).is_file():  # fmt: skip
        path = own
    if not path.is_file():
        return BaselineLookup(path, None, f"{NO_BASELINE}: {path} does not exist (set one with "
                                          "`omniqual perf baseline update`)")  # fmt: skip
    try:
        baseline = load_baseline(path)
    except SpecError as exc:
        return BaselineLookup(path, None, f"{NO_BASELINE}: {path} is not a valid baseline: {exc}")
    why = None
    if baseline.row != str(row):
        why = f"{path} is for row {baseline.row}"
    elif baseline.hardware != hardware:
        why = f"{path} is for hardware {baseline.hardware}, the row is on {hardware}"
    elif (moved := baseline.serve.mismatch(identity)) is not None:
        why = f"{path} was set on another serve configuration ({moved})"
    elif baseline.workload_sha256 != workload:
        why = (f"{path} was set on other work (workload {baseline.workload_sha256[:12]}, this "
               f"run {workload[:12]}): the gate's shapes, counts or seed changed")  # fmt: skip
    if why is not None:
        return BaselineLookup(path, None, f"{NO_BASELINE}: {why}")
    launches = len(baseline.evidence.launches) or 1
    if launches < MIN_LAUNCHES:
        return BaselineLookup(path, None, (
            f"{FEW_LAUNCHES}: {path} was set from {launches} server launch"
            f"{'' if launches == 1 else 'es'}, at least {MIN_LAUNCHES} are needed to know how "
            "far launches of one build differ (re-set it with `omniqual perf baseline update "
            "--from RUN_DIR` once per launch)"))  # fmt: skip
    return BaselineLookup(path, baseline, None)


def judge(launches: list[list[float]], baseline: PerfBaseline, confidence: float,
          host: HostRatio | None = None, probes: Sequence[float] = ()) -> Comparison:  # fmt: skip
    """The run's launches (each its repetitions of the baseline's metric) against the baseline's
    launches (:func:`find_baseline` hands out only baselines with enough of them); ``probes``:
    each launch's reference workload reading, when comparable with the baseline's."""
    return compare_launches([Spread.of(values) for values in launches], _launch_means(baseline),
                            threshold=baseline.threshold,
                            direction=Direction(baseline.direction), confidence=confidence,
                            host=host, fit=host_fit(baseline), probes=probes)  # fmt: skip


def host_fit(baseline: PerfBaseline) -> HostFit | None:
    """How the baseline's launches followed the reference workload read beside them."""
    launches = baseline.evidence.launches
    return HostFit.of([x.host_probe_s or 0.0 for x in launches], [x.mean for x in launches])


def _launch_means(baseline: PerfBaseline) -> Spread:
    return Spread.of([launch.mean for launch in baseline.evidence.launches])


def repetitions_cannot_decide(
    launches: list[list[float]], baseline: PerfBaseline, confidence: float,
    host: HostRatio | None = None, probes: Sequence[float] = (),
) -> str | None:  # fmt: skip
    """Why no further repetition of the run's last launch could decide against ``baseline``
    (the spread of its launches, and the host's term, keep the interval across the threshold
    wherever the last launch may settle), or None."""
    spread = _launch_means(baseline)
    earlier = [Spread.of(values).mean for values in launches[:-1]]
    floor = launches_cannot_decide(Spread.of(launches[-1]), spread,
                                   threshold=baseline.threshold,
                                   direction=Direction(baseline.direction),
                                   confidence=confidence, earlier=earlier, host=host,
                                   fit=host_fit(baseline), probes=probes)  # fmt: skip
    if floor is None:
        return None
    runs = "a new launch's" if len(launches) == 1 else f"the mean of {len(launches)} launches'"
    hosted = " and the host's term" if host is not None and host.differs(confidence) else ""
    return (f"more cannot decide: the spread of the baseline's {spread.count} launches alone "
            f"keeps {runs} interval at least ±{floor:.1%} wide{hosted}, and this run's mean "
            "cannot settle far enough from the threshold")
