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
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

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
    va, vb = a.stdev**2 / a.count, b.stdev**2 / b.count
    denominator = va**2 / (a.count - 1) + vb**2 / (b.count - 1)
    return None if denominator == 0 else (va + vb) ** 2 / denominator


def compare(
    candidate: Spread, baseline: Spread, *, threshold: float, direction: Direction,
    confidence: float,
) -> Comparison:  # fmt: skip
    """The candidate's relative change against the baseline and the decision of the rule."""
    if baseline.mean <= 0:
        raise ValueError("the baseline mean must be positive")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    change = (candidate.mean - baseline.mean) / baseline.mean
    se = math.sqrt(candidate.stdev**2 / candidate.count + baseline.stdev**2 / baseline.count)
    se /= baseline.mean
    df_exact = welch_df(candidate, baseline)
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
