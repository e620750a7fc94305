"""Which baseline may judge a perf run, and what it concludes.

A baseline judges a run only when it is the row's own file for the row's hardware and was set
on the same serve configuration (serve config hash and checkpoint hash, where recorded) and the
same work (workload hash). Anything else is ``invalid: no baseline for this hardware/config``,
never a verdict from a stranger's numbers. Nor does one set from fewer than
:data:`~omniqual.specs.perf_baseline.MIN_LAUNCHES` server launches: how far launches of one build
differ is what a run's launches are read against. Nor one whose metric is a percentile that a
repetition's sample count cannot support (the sample-sufficiency rule of soak and bench,
:mod:`omniqual.loadgen.sufficiency`): a p99 of 20 requests is no claim to judge. The comparison
itself is :func:`omniqual.loadgen.regression.compare_launches` with the run as one session
against the baseline's sessions (:mod:`omniqual.loadgen.sessions`: launches of one run share
their host's state, so their number narrows only the run's own term), a prediction interval
against the owner's threshold, with the host's term where it differs. A baseline needs
:data:`~omniqual.specs.perf_baseline.MIN_LAUNCHES` sessions as well as launches.
"""

import math
import statistics
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
from omniqual.loadgen.sessions import (
    Session,
    SessionLaunch,
    one_session,
    session_spread,
    sessions,
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
    runs = len(baseline_sessions(baseline))
    if runs < MIN_LAUNCHES:
        return BaselineLookup(path, None, (
            f"{FEW_LAUNCHES}: {path} was set from {runs} run{'' if runs == 1 else 's'} (host "
            f"sessions), at least {MIN_LAUNCHES} are needed to know how far sessions of one "
            "build differ (add runs with `omniqual perf baseline update --from RUN_DIR --add`)"))
    return BaselineLookup(path, baseline, None)


def judge(launches: list[list[float]], baseline: PerfBaseline, confidence: float,
          host: HostRatio | None = None, probes: Sequence[float] = ()) -> Comparison:  # fmt: skip
    """The run's launches (each its repetitions of the baseline's metric), as one session,
    against the baseline's sessions (:func:`find_baseline` hands out only baselines with enough
    of them); ``probes``: each launch's reference workload reading, when comparable with the
    baseline's."""
    return compare_launches([one_session([Spread.of(values) for values in launches])],
                            session_spread(baseline_sessions(baseline)),
                            threshold=baseline.threshold,
                            direction=Direction(baseline.direction), confidence=confidence,
                            host=host, fit=host_fit(baseline),
                            probes=session_probe(probes))  # fmt: skip


def baseline_sessions(baseline: PerfBaseline) -> tuple[Session, ...]:
    """The baseline's launches grouped by the run they were measured in."""
    return sessions([SessionLaunch(x.run_id, x.mean, x.host_probe_s)
                     for x in baseline.evidence.launches])  # fmt: skip


def session_probe(probes: Sequence[float]) -> list[float]:
    """A run's readings (one per launch) as its session's one reading (their log mean)."""
    if not probes or min(probes) <= 0:
        return []
    return [math.exp(statistics.fmean(math.log(p) for p in probes))]


def host_fit(baseline: PerfBaseline) -> HostFit | None:
    """How the baseline's sessions followed the reference workload read beside them."""
    groups = baseline_sessions(baseline)
    return HostFit.of([s.probe_s or 0.0 for s in groups], [s.mean for s in groups])


def repetitions_cannot_decide(
    launches: list[list[float]], baseline: PerfBaseline, confidence: float,
    host: HostRatio | None = None, probes: Sequence[float] = (),
) -> str | None:  # fmt: skip
    """Why no further repetition of the run's last launch could decide against ``baseline``
    (the spread of its sessions, and the host's term, keep the interval across the threshold
    wherever the run's session mean may settle), or None."""
    spread = session_spread(baseline_sessions(baseline))
    floor = launches_cannot_decide(one_session([Spread.of(values) for values in launches]),
                                   spread, threshold=baseline.threshold,
                                   direction=Direction(baseline.direction),
                                   confidence=confidence, host=host, fit=host_fit(baseline),
                                   probes=session_probe(probes))  # fmt: skip
    if floor is None:
        return None
    hosted = " and the host's term" if host is not None and host.differs(confidence) else ""
    return (f"more cannot decide: the spread of the baseline's {spread.count} sessions alone "
            f"keeps a new session's interval at least ±{floor:.1%} wide{hosted}, and this run's "
            "mean cannot settle far enough from the threshold")
