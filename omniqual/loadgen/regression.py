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
reference workload unchanged. So the unit a run is judged on is the launch: against a baseline
set from ``n`` launches (the mean of each, sample deviation ``s_L``), a run of ``m`` fresh
launches (:func:`compare_launches`) is read as the mean of its launch means, and the baseline
side is the launches' mean with the spread of the mean of ``m`` *new* launches around it,
``s_L**2 * (1/m + 1/n)`` (a prediction interval, ``n - 1`` degrees of freedom): ``m`` launches
shrink the new run's term by ``sqrt(m)`` when they are independent of each other. Launches of
one run are not (they share their host's state): the perf gate passes the run as one unit
against the baseline's sessions (:mod:`omniqual.loadgen.sessions`), so ``m = 1`` there and
``n`` counts sessions. Each launch's own scatter (its repetitions' spread
over their count, over ``m**2``) is added besides; ``s_L`` already holds the within-launch
scatter of each launch's mean, so the interval is conservative, never narrower than the host
allows. One launch (``m = 1``) is :func:`compare` with ``launches``.

**Resolution.** With ``m`` launches per run, ``r`` repetitions each and the baseline's within-
launch spread, an unchanged server's typical interval is ``±h`` (:func:`resolution`): a threshold
below ``h`` can never pass an unchanged server, and a regression is failed in the typical case
only from ``threshold + h`` on. A baseline states both (``omniqual perf baseline update``).

**A host that differs.** A run whose host reads slower or faster than the baseline's
(:class:`~omniqual.loadgen.host_speed.HostRatio`, beyond what the baseline's own launches were
read on) may owe any part of its change to the host, from none of it to all of it (the server's
latency moving with the reference workload). The interval then takes the host's ratio ``H`` as
a term of its own: its bounds ``[H_lo, H_hi]`` (each clipped at 1, at the ratio's own interval)
divide the far ends, ``[(1 + lo) / H_hi - 1, (1 + hi) / H_lo - 1]`` for lower-is-better
(throughput multiplies), and the launches' interval and the ratio's share the ``confidence``
(each at ``1 - (1 - confidence) / 2``, so together they hold at ``confidence``). A slower host
then never fails a build it may explain, a faster one never passes a build it may hide, and a
change beyond both still decides. With the baseline's own launches read across hosts, a fit of
their means on their readings (:mod:`omniqual.loadgen.host_fit`) says how much of a slower
reading reaches the server: only its interval may pass a run on a slower host, and a run that
the bounds cannot fail still fails by the fit with its slope at the upper end of its interval.

**When more repetitions cannot decide.** Repetitions shrink only the last launch's own term:
however many there are, the interval stays at least ``z * s_L * sqrt(1/m + 1/n)`` wide on each
side (the normal quantile, below every t quantile, so this floor is never overstated), widened
by the host's term. When the threshold lies inside that floor around every mean the run may
still settle on (its last launch's mean give or take its own ``confidence`` half-width, over
``m``), no further repetition of that launch can decide: :func:`launches_cannot_decide` says so,
and a caller stops measuring instead of spending its budget on repetitions that change nothing.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from statistics import NormalDist

from omniqual.loadgen.host_fit import HostFit, adjust
from omniqual.loadgen.host_speed import DIFFERS, HostRatio
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
    host_low: float | None = None
    """The bounds of the host's effect the interval allows for (None: no host term)."""
    host_high: float | None = None
    host_ratio: float | None = None
    host_slope: float | None = None
    """The slope the interval was adjusted by (None: not adjusted; see
    :mod:`omniqual.loadgen.host_fit`)."""
    adjusted_by: str | None = None

    def describe(self) -> str:
        host = ("" if self.host_ratio is None or self.host_low is None else
                f"; {DIFFERS} {self.host_ratio - 1:+.0%} against the "
                f"baseline's, so the interval allows its effect from none to all of it "
                f"(x{self.host_low:.3g} to x{self.host_high:.3g})")  # fmt: skip
        if self.adjusted_by is not None:
            host = f"; {self.adjusted_by}"
        return (f"{self.change:+.1%} against the baseline, {self.confidence:.0%} interval "
                f"[{self.low:+.1%}, {self.high:+.1%}], threshold {self.threshold:.0%} "
                f"({self.direction.value} is better){host}")  # fmt: skip


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
    _check_confidence(confidence)
    if launches is not None:
        return compare_launches([candidate], launches, threshold=threshold,
                                direction=direction, confidence=confidence)  # fmt: skip
    terms = [(candidate.stdev**2 / candidate.count, candidate.count - 1),
             (baseline.stdev**2 / baseline.count, baseline.count - 1)]  # fmt: skip
    return _decide(candidate.mean, baseline.mean, terms, threshold, direction, confidence)


def compare_launches(
    runs: Sequence[Spread], launches: Spread, *, threshold: float, direction: Direction,
    confidence: float, host: HostRatio | None = None, fit: HostFit | None = None,
    probes: Sequence[float] = (),
) -> Comparison:  # fmt: skip
    """``runs`` (each new launch's repetitions) read as the mean of their launch means against
    the baseline's ``launches`` (the mean of each of its launches), with the host's term when
    ``host`` differs from the baseline's (see the module's text). With ``fit`` (how the
    baseline's launches followed the reference workload) and the run's ``probes`` (one reading
    per launch) on a host that read slower, only the interval adjusted by the fit may pass the
    run, and the run fails by the host's bounds or by the fit with its slope at the upper end of
    its interval (:mod:`omniqual.loadgen.host_fit`)."""
    bounded = _bounded(runs, launches, threshold=threshold, direction=direction,
                       confidence=confidence, host=host)  # fmt: skip
    if (fit is None or len(probes) != len(runs) or not fit.applies(probes)
            or bounded.decision is Decision.REGRESSED):  # fmt: skip
        return bounded
    adjusted = _adjusted(runs, probes, fit, threshold, direction, confidence)
    if adjusted.decision is Decision.WITHIN:
        return adjusted
    failing = _adjusted(runs, probes, fit, threshold, direction, confidence,
                        slope=fit.upper_slope(confidence))  # fmt: skip
    if failing.decision is Decision.REGRESSED:
        return failing
    # Undecided: shown by the interval that kept it from passing when the bounds alone would.
    shown = adjusted if bounded.decision is Decision.WITHIN else bounded
    return replace(shown, decision=Decision.UNDECIDED)


def _adjusted(runs: Sequence[Spread], probes: Sequence[float], fit: HostFit, threshold: float,
              direction: Direction, confidence: float,
              slope: float | None = None) -> Comparison:  # fmt: skip
    sign = 1 if direction is Direction.LOWER else -1
    a = adjust([r.mean for r in runs], [r.stdev for r in runs], probes,
               [r.count for r in runs], fit, sign, slope)  # fmt: skip
    se = math.sqrt(sum(v for v, _ in a.terms))
    df_exact = _satterthwaite(a.terms)
    df = None if df_exact is None else max(1, math.floor(df_exact))
    half = 0.0 if df is None else student_t_quantile((1 + confidence) / 2, df) * se
    low, high = math.expm1(a.log_change - half), math.expm1(a.log_change + half)
    used = fit.used_slope if slope is None else slope
    taken = (f"taken as {used:.2f}" if slope is None
             else f"taken at the upper end of its interval, {used:.2f}")  # fmt: skip
    why = (f"adjusted for a host reading {math.expm1(a.host_log):+.1%} against the fit's "
           f"sessions: {fit.describe()}, {taken}")  # fmt: skip
    return Comparison(math.expm1(a.log_change), low, high, confidence, df, threshold, direction,
                      _decision(low, high, threshold, direction), host_slope=used,
                      adjusted_by=why)  # fmt: skip


def _bounded(
    runs: Sequence[Spread], launches: Spread, *, threshold: float, direction: Direction,
    confidence: float, host: HostRatio | None,
) -> Comparison:  # fmt: skip
    _check_confidence(confidence)
    if not runs:
        raise ValueError("no launch to compare")
    m = len(runs)
    differs = host is not None and host.differs(confidence)
    level = 1 - (1 - confidence) / 2 if differs else confidence
    terms = [(launches.stdev**2 * (1 / m + 1 / launches.count), launches.count - 1)]
    terms += [(r.stdev**2 / r.count / m**2, r.count - 1) for r in runs]
    mean = statistics.fmean(r.mean for r in runs)
    plain = _decide(mean, launches.mean, terms, threshold, direction, level)
    if not differs:
        return plain
    assert host is not None
    low_h, high_h = host.bounds(level)
    if direction is Direction.LOWER:  # the host slowed the server down by x H at most
        low, high = (1 + plain.low) / high_h - 1, (1 + plain.high) / low_h - 1
    else:  # ... or cut its throughput by / H
        low, high = (1 + plain.low) * low_h - 1, (1 + plain.high) * high_h - 1
    decision = _decision(low, high, threshold, direction)
    return Comparison(plain.change, low, high, confidence, plain.df, threshold, direction,
                      decision, low_h, high_h, host.ratio)  # fmt: skip


def resolution(launches: Spread, *, within_sd: float, per_run: int, repetitions: int,
               confidence: float) -> float:  # fmt: skip
    """The half-width (relative) of an unchanged server's typical interval: ``per_run`` new
    launches of ``repetitions`` each, at the baseline's mean with its within-launch spread
    ``within_sd`` (the smallest threshold a run can pass it at; see the module's text)."""
    if per_run < 1 or repetitions < 2:
        raise ValueError("a run needs at least one launch of at least two repetitions")
    typical = [Spread(repetitions, launches.mean, within_sd)] * per_run
    c = compare_launches(typical, launches, threshold=1.0, direction=Direction.LOWER,
                         confidence=confidence)  # fmt: skip
    return c.high


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")


def _decide(mean: float, reference: float, terms: list[tuple[float, int]], threshold: float,
            direction: Direction, confidence: float) -> Comparison:  # fmt: skip
    if reference <= 0:
        raise ValueError("the baseline mean must be positive")
    change = (mean - reference) / reference
    se = math.sqrt(sum(v for v, _ in terms)) / reference
    df_exact = _satterthwaite(tuple(terms))
    df = None if df_exact is None else max(1, math.floor(df_exact))
    half = 0.0 if df is None else student_t_quantile((1 + confidence) / 2, df) * se
    low, high = change - half, change + half
    decision = _decision(low, high, threshold, direction)
    return Comparison(change, low, high, confidence, df, threshold, direction, decision)


def _decision(low: float, high: float, threshold: float, direction: Direction) -> Decision:
    if direction is Direction.LOWER:
        regressed, within = low > threshold, high <= threshold
    else:
        regressed, within = high < -threshold, low >= -threshold
    return (Decision.REGRESSED if regressed else Decision.WITHIN if within
            else Decision.UNDECIDED)  # fmt: skip


def launches_cannot_decide(
    candidate: Spread, launches: Spread, *, threshold: float, direction: Direction,
    confidence: float, earlier: Sequence[float] = (), host: HostRatio | None = None,
    fit: HostFit | None = None, probes: Sequence[float] = (),
) -> float | None:  # fmt: skip
    """The floor half-width (relative) of the interval when no further repetitions of the run's
    last launch (``candidate``; ``earlier``: the means of the launches before it) could take it
    off the threshold (see the module's text), else None."""
    if candidate.count < 2 or launches.count < 2 or launches.mean <= 0:
        return None
    m = len(earlier) + 1
    differs = host is not None and host.differs(confidence)
    level = 1 - (1 - confidence) / 2 if differs else confidence
    low_h, high_h = host.bounds(level) if differs and host is not None else (1.0, 1.0)
    reference = launches.mean
    z = NormalDist().inv_cdf((1 + level) / 2)
    floor = z * launches.stdev * math.sqrt(1 / m + 1 / launches.count) / reference
    t = student_t_quantile((1 + level) / 2, candidate.count - 1)
    reach = t * candidate.stdev / math.sqrt(candidate.count) / reference / m
    change = (statistics.fmean([*earlier, candidate.mean]) - reference) / reference
    # Undecidable when, wherever the mean settles within its reach, even the narrowest
    # interval (the floor, widened by the host's term) keeps the threshold inside it.
    if direction is Direction.LOWER:
        never_regressed = (1 + change + reach - floor) / high_h - 1 <= threshold
        never_within = (1 + change - reach + floor) / low_h - 1 > threshold
    else:
        never_regressed = (1 + change - reach + floor) * high_h - 1 >= -threshold
        never_within = (1 + change + reach - floor) * low_h - 1 < -threshold
    if fit is not None and len(probes) == m and fit.applies(probes):
        never_within = _never_adjusted(candidate, earlier, probes, fit, threshold, direction,
                                       confidence, within=True)  # fmt: skip
        never_regressed = never_regressed and _never_adjusted(
            candidate, earlier, probes, fit, threshold, direction, confidence, within=False,
        )  # fmt: skip
    return floor if never_regressed and never_within else None


def _never_adjusted(candidate: Spread, earlier: Sequence[float], probes: Sequence[float],
                    fit: HostFit, threshold: float, direction: Direction, level: float, *,
                    within: bool) -> bool:  # fmt: skip
    """Whether the interval adjusted by ``fit`` stays off "within" (its point slope) or off
    "regressed" (its upper slope) wherever the last launch's mean may settle: its floor holds
    the fit's terms, not the last launch's own."""
    sign = 1 if direction is Direction.LOWER else -1
    means = [*earlier, candidate.mean]
    slope = None if within else fit.upper_slope(level)
    a = adjust(means, [0.0] * len(means), probes, [2] * len(means), fit, sign, slope)
    floor = NormalDist().inv_cdf((1 + level) / 2) * math.sqrt(sum(v for v, _ in a.terms))
    t = student_t_quantile((1 + level) / 2, candidate.count - 1)
    reach = t * candidate.stdev / math.sqrt(candidate.count) / candidate.mean / len(means)
    limit = math.log1p(threshold if direction is Direction.LOWER else -threshold)
    if direction is Direction.LOWER:
        return (a.log_change - reach + floor > limit if within
                else a.log_change + reach - floor <= limit)  # fmt: skip
    return (a.log_change + reach - floor < limit if within
            else a.log_change - reach + floor >= limit)  # fmt: skip
