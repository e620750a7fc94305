"""Each feature of a candidate row judged by its own rule of activity: its declared log and
metric signals, its measured output difference (attributable only when it is the one feature of
the row that changes outputs), its measured shared execution and, for a quantization, its module
census, then the verdict of :func:`judge_activity` per feature, collected for the whole row."""

from collections.abc import Sequence
from dataclasses import dataclass, field

from omniqual.checks.parity.candidate_census import Census, census_signal
from omniqual.checks.parity.candidate_collect import SideRun
from omniqual.checks.parity.candidate_measured import (
    Spread,
    output_signal,
    shared_execution_signal,
)
from omniqual.checks.parity.candidate_media import OutputPair
from omniqual.checks.parity.candidate_params import FastPath
from omniqual.checks.parity.candidate_proof import Signal, judge_activity, signals_for


@dataclass(slots=True)
class RowActivity:
    failures: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    limitations: list[str] = field(default_factory=list)
    signals: list[Signal] = field(default_factory=list)


def judge_paths(
    paths: Sequence[FastPath],
    *,
    log: str | None,
    metrics: str | None,
    pairs: Sequence[OutputPair],
    spread: Spread,
    candidate: SideRun,
    census: Census | None = None,
) -> RowActivity:
    found = RowActivity()
    for path in paths:
        measured: list[Signal] = []
        if path.proven_by_output:
            others = [q.feature for q in paths if q is not path and q.proven_by_output]
            measured.append(output_signal(path.feature, pairs, spread, others))
        if path.shared_execution:
            measured.append(shared_execution_signal(path.feature, candidate))
        if path.census is not None:
            taken = census or Census(None, "no module census was taken", "", ())
            measured.append(census_signal(path.feature, path.census, taken))
        signals = signals_for(path, log, metrics, measured)
        found.signals += signals
        activity = judge_activity(path, signals)
        found.failures += [activity.failure] if activity.failure else []
        found.invalid += [activity.invalid] if activity.invalid else []
        found.limitations += [activity.limitation] if activity.limitation else []
    return found
