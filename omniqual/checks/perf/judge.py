"""Which baseline may judge a perf run, and what it concludes.

A baseline judges a run only when it is the row's own file for the row's hardware and was set
on the same serve configuration (serve config hash and checkpoint hash, where recorded) and the
same work (workload hash). Anything else is ``invalid: no baseline for this hardware/config``,
never a verdict from a stranger's numbers. Nor does one set from fewer than
:data:`~omniqual.specs.perf_baseline.MIN_LAUNCHES` server launches: a run is one launch, and
how far launches of one build differ is what a new launch is read against. The comparison itself
is :func:`omniqual.loadgen.regression.compare` (a prediction interval for one new launch against
the owner's threshold).
"""

from dataclasses import dataclass
from pathlib import Path

from omniqual.domain.axes import RowKey
from omniqual.domain.provenance import Provenance
from omniqual.domain.rules import UNKNOWN_VALUES
from omniqual.loadgen.regression import (
    Comparison,
    Direction,
    Spread,
    compare,
    launches_cannot_decide,
)
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
    directory: Path, row: RowKey, hardware: str, identity: ServeIdentity, workload: str
) -> BaselineLookup:
    path = baseline_path(directory, row, hardware)
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


def judge(values: list[float], baseline: PerfBaseline, confidence: float) -> Comparison:
    """The run's repetitions of the baseline's metric, one new launch, against the baseline's
    launches (:func:`find_baseline` hands out only baselines with enough of them)."""
    launches = Spread.of([launch.mean for launch in baseline.evidence.launches])
    return compare(Spread.of(values), Spread.of(baseline.evidence.repetitions),
                   threshold=baseline.threshold, direction=Direction(baseline.direction),
                   confidence=confidence, launches=launches)  # fmt: skip


def repetitions_cannot_decide(values: list[float], baseline: PerfBaseline,
                              confidence: float) -> str | None:  # fmt: skip
    """Why no further repetition of this launch could decide against ``baseline`` (the spread
    of its launches alone keeps the interval across the threshold), or None."""
    launches = Spread.of([launch.mean for launch in baseline.evidence.launches])
    floor = launches_cannot_decide(Spread.of(values), launches, threshold=baseline.threshold,
                                   direction=Direction(baseline.direction),
                                   confidence=confidence)  # fmt: skip
    if floor is None:
        return None
    return (f"more cannot decide: the spread of the baseline's {launches.count} launches alone "
            f"keeps a new launch's interval at least ±{floor:.1%} wide, and this launch's mean "
            "cannot settle far enough from the threshold")
