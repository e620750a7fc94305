"""Whether repeated measurements regressed against a baseline's: a Welch t interval on the
relative difference of the two means, read against a relative threshold.

The rule (the perf gate's verdict):

* ``d`` = (candidate mean - baseline mean) / baseline mean, with the Welch standard error of the
  difference of the means (each side's sample spread over its own count, divided by the
  baseline mean) and Welch-Satterthwaite degrees of freedom (rounded down: conservative).
* The two-sided ``confidence`` interval ``[lo, hi]`` on ``d`` is ``d ± t * se``.
* "Bad" is up for a lower-is-better metric (latency) and down for a higher-is-better one
  (throughput); ``threshold`` is the relative change the baseline's owner tolerates.
* ``regressed``: the whole interval lies beyond the threshold in the bad direction.
* ``within``: the whole interval lies on the good side of the threshold (no regression beyond
  it at that confidence; an improvement is within too).
* ``undecided``: the interval straddles the threshold. More repetitions narrow it; a caller that
  cannot gather more reports it as inconclusive, never as a pass or a fail.

The baseline mean is treated as exact when scaling to a relative change (its uncertainty is in
the interval through its spread). Both sides need at least two values (a spread).

**Launch to launch.** Repetitions within one server launch scatter less than launches do: on a
shared 2-vCPU guest the means of nine launches of the same build spread by 7 % (sd), where eight
repetitions pin one launch's mean to about 2.5 %, with no hypervisor steal and the host's
reference workload unchanged. A run is one launch, so against a baseline set from several
launches (``launches``: the mean of each) the question is whether this launch's mean is beyond
what another launch of the baseline's build would give: the baseline side is then the launches'
mean with the spread of a *new* launch around it, ``s_L**2 * (1 + 1/k)`` for ``k`` launch means
of sample deviation ``s_L`` (a prediction interval, ``k - 1`` degrees of freedom), instead of
``s**2 / n`` of pooled repetitions. ``s_L`` already holds the within-launch scatter of each
launch's mean, so the interval is conservative, never narrower than the host allows.

**When more repetitions cannot decide.** Repetitions shrink only the run's own term: however
many there are, the interval stays at least ``z * s_L * sqrt(1 + 1/k)`` wide on each side (the
normal quantile, below every t quantile, so this floor is never overstated). When the threshold
lies inside that floor around every mean this launch may still settle on (its mean give or take
its own ``confidence`` half-width), no further repetition of this launch can decide:
:func:`launches_cannot_decide` says so, and a caller stops measuring instead of spending its
budget on repetitions that change nothing.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from statistics import NormalDist

from omniqual.loadgen.trend import student_t_quantile


class Direction(StrEnum):
    LOWER = "lower"
    """Lower is better (latency, duration)."""
    HIGHER = "higher"
    """Higher is better (throughput)."""


class Decision(StrEnum):
    REGRESSED = "regressed"
    WITHIN = "within"
    UNDECIDED = "undecided"


@dataclass(frozen=True, slots=True)
class Spread:
    """Repeated values of one metric: their count, mean and sample standard deviation."""

    count: int
    mean: float
    stdev: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        if len(values) < 2:
            raise ValueError(f"a spread needs at least two values, got {len(values)}")
        return cls(len(values), statistics.fmean(values), statistics.stdev(values))


@dataclass(frozen=True, slots=True)
class Comparison:
    """The relative change of the candidate's mean against the baseline's, with its interval."""

    change: float
    low: float
    high: float
    confidence: float
    df: int | None
    """Welch-Satterthwaite degrees of freedom used (None: no spread on either side)."""
    threshold: float
    direction: Direction
    decision: Decision

    def describe(self) -> str:
        return (f"{self.change:+.1%} against the baseline, {self.confidence:.0%} interval "
                f"[{self.low:+.1%}, {self.high:+.1%}], threshold {self.threshold:.0%} "
                f"({self.direction.value} is better)")  # fmt: skip


def welch_df(a: Spread, b: Spread) -> float | None:
    return _satterthwaite(((a.stdev**2 / a.count, a.count - 1),
                           (b.stdev**2 / b.count, b.count - 1)))  # fmt: skip


def _satterthwaite(terms: tuple[tuple[float, int], ...]) -> float | None:
    """Degrees of freedom of a sum of variance terms, each ``(variance, its df)``."""
    denominator = sum(v**2 / df for v, df in terms)
    return None if denominator == 0 else sum(v for v, _ in terms) ** 2 / denominator


def compare(
    candidate: Spread, baseline: Spread, *, threshold: float, direction: Direction,
    confidence: float, launches: Spread | None = None,
) -> Comparison:  # fmt: skip
    """The candidate's relative change against the baseline and the decision of the rule;
    with ``launches`` (the means of the baseline's server launches) the candidate is one new
    launch read against them (see the module's text)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    terms = [(candidate.stdev**2 / candidate.count, candidate.count - 1)]
    if launches is not None:
        reference = launches.mean
        terms.append((launches.stdev**2 * (1 + 1 / launches.count), launches.count - 1))
    else:
        reference = baseline.mean
        terms.append((baseline.stdev**2 / baseline.count, baseline.count - 1))
    if reference <= 0:
        raise ValueError("the baseline mean must be positive")
    change = (candidate.mean - reference) / reference
    se = math.sqrt(sum(v for v, _ in terms)) / reference
    df_exact = _satterthwaite(tuple(terms))
    df = None if df_exact is None else max(1, math.floor(df_exact))
    half = 0.0 if df is None else student_t_quantile((1 + confidence) / 2, df) * se
    low, high = change - half, change + half
    if direction is Direction.LOWER:
        regressed, within = low > threshold, high <= threshold
    else:
        regressed, within = high < -threshold, low >= -threshold
    decision = (Decision.REGRESSED if regressed else Decision.WITHIN if within
                else Decision.UNDECIDED)  # fmt: skip
    return Comparison(change, low, high, confidence, df, threshold, direction, decision)


def launches_cannot_decide(
    candidate: Spread, launches: Spread, *, threshold: float, direction: Direction,
    confidence: float,
) -> float | None:  # fmt: skip
    """The floor half-width (relative) of the interval when no further repetitions of this
    launch could take it off the threshold (see the module's text), else None."""
    if candidate.count < 2 or launches.count < 2 or launches.mean <= 0:
        return None
    reference = launches.mean
    z = NormalDist().inv_cdf((1 + confidence) / 2)
    floor = z * launches.stdev * math.sqrt(1 + 1 / launches.count) / reference
    t = student_t_quantile((1 + confidence) / 2, candidate.count - 1)
    reach = t * candidate.stdev / math.sqrt(candidate.count) / reference
    change = (candidate.mean - reference) / reference
    edge = threshold if direction is Direction.LOWER else -threshold
    return floor if abs(change - edge) + reach <= floor else None
