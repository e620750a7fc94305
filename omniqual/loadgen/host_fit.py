"""How far a server's launches followed the host's reference workload, measured on the launches
a baseline was set from, and the interval it gives a run on a host that reads slower. The perf
gate fits the baseline's sessions (each run's launches as one: their mean and their mean log
reading, :mod:`omniqual.loadgen.sessions`) and judges a run as one (``m = 1``).

A baseline's launches each carry their mean and the median of the reference workload read
beside them (:mod:`omniqual.loadgen.host_speed`). Fitted on logarithms, ``log mean = a + b *
log probe`` says how much of a slower reading reached the server: on the committed Sapphire
Rapids SD3 baseline, launches of one build read across 3.4-4.1 ms followed it with a slope of
about 1 (a run whose reading rose 13 % between its launches ran 12 % slower with it).

:func:`adjusted_comparison` reads a run against the baseline's mean *at the run's own reading*:
the fit's prediction there, its error growing with the distance from the readings the fit was
made on (the slope's standard error times that distance), beside the launch-to-launch scatter
the fit leaves (its residual) for the run's ``m`` launches and the baseline's ``n``. The slope
is held to [0, 1]: never more of the host's change than its reading shows.

It applies only on a host that read slower than the baseline's launches did (:func:`applies`):
a run's reading is the mean of several launches, so it is less noisy than one launch's reading
the fit was made on, and a slope fitted against noisy readings is flattened towards 0.
Predicting with it then credits the host with less than it did, which can keep an unchanged
server from passing but never lets a slower one through. On a faster host the same flattening
would hide part of a regression, so there it does not apply.

To fail a run, the fit credits the host with as much as it allows: the slope at the upper end of
its confidence interval (:meth:`HostFit.upper_slope`, held to [0, 1]), whose own uncertainty is
then spent. A fit made over launches that read as slow as the run's host reads (the baseline's
launches spanning hosts) has a narrow slope, so a host whose reading does not reach the server
no longer shields a regression behind the whole of its reading.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from omniqual.loadgen.trend import student_t_quantile

MIN_FIT_LAUNCHES = 4
"""Launches with a reading a fit needs (two degrees of freedom left for its residual)."""


@dataclass(frozen=True, slots=True)
class HostFit:
    """``log mean = mean_log + slope * (log probe - probe_log)`` over ``count`` launches."""

    count: int
    slope: float
    slope_se: float
    residual_sd: float
    """The launch means' scatter around the fit (log units, ``count - 2`` degrees of freedom)."""
    probe_log: float
    """The mean log reading of the launches."""
    mean_log: float

    @classmethod
    def of(cls, probes: Sequence[float], means: Sequence[float]) -> HostFit | None:
        """The fit over launches with a positive reading and mean; None with fewer than
        :data:`MIN_FIT_LAUNCHES` of them or readings that never moved."""
        pairs = [(math.log(p), math.log(m)) for p, m in zip(probes, means, strict=True)
                 if p > 0 and m > 0]  # fmt: skip
        if len(pairs) < MIN_FIT_LAUNCHES:
            return None
        xs, ys = [x for x, _ in pairs], [y for _, y in pairs]
        x_bar, y_bar = statistics.fmean(xs), statistics.fmean(ys)
        sxx = sum((x - x_bar) ** 2 for x in xs)
        if sxx < 1e-12:  # rounding's residue of readings that never moved
            return None
        slope = sum((x - x_bar) * (y - y_bar) for x, y in pairs) / sxx
        residuals = [y - y_bar - slope * (x - x_bar) for x, y in pairs]
        residual_sd = math.sqrt(sum(r * r for r in residuals) / (len(pairs) - 2))
        return cls(len(pairs), slope, residual_sd / math.sqrt(sxx), residual_sd, x_bar, y_bar)

    @property
    def used_slope(self) -> float:
        """The slope a prediction uses: held to [0, 1]."""
        return min(1.0, max(0.0, self.slope))

    def upper_slope(self, level: float) -> float:
        """The slope at the upper end of its two-sided ``level`` interval, held to [0, 1]: the
        most of a slower reading the fit allows to have reached the server."""
        t = student_t_quantile((1 + level) / 2, self.count - 2)
        return min(1.0, max(0.0, self.slope + t * self.slope_se))

    def applies(self, probes: Sequence[float]) -> bool:
        """Whether a run read at ``probes`` (one per launch) may be judged by the fit: every
        launch read, and their mean log reading at or above the fit's (a slower host)."""
        if not probes or min(probes) <= 0:
            return False
        return statistics.fmean(math.log(p) for p in probes) >= self.probe_log

    def describe(self) -> str:
        return (f"the baseline's {self.count} sessions followed its reference workload with a "
                f"slope of {self.slope:.2f} (± {self.slope_se:.2f})")  # fmt: skip


@dataclass(frozen=True, slots=True)
class Adjusted:
    """A run's log change against the fit's prediction at its reading, with its error terms
    (each ``(variance, degrees of freedom)``, log units)."""

    log_change: float
    terms: tuple[tuple[float, int], ...]
    host_log: float
    """How much slower the run's host read than the fit's launches (log units)."""


def adjust(means: Sequence[float], within: Sequence[float], probes: Sequence[float],
           counts: Sequence[int], fit: HostFit, sign: int,
           slope: float | None = None) -> Adjusted:  # fmt: skip
    """The run's launches (their ``means``, each launch's repetition spread ``within`` over its
    ``counts`` repetitions, their ``probes``) against the fit; ``sign`` +1 for a metric the
    host's slowness raises (latency), -1 for one it lowers (throughput). With ``slope`` (the
    fit's upper slope, to fail a run) the slope's uncertainty is spent in it, not a term."""
    m = len(means)
    distance = statistics.fmean(math.log(p) for p in probes) - fit.probe_log
    used = fit.used_slope if slope is None else slope
    predicted = fit.mean_log + sign * used * distance
    observed = statistics.fmean(math.log(x) for x in means)
    df = fit.count - 2
    terms = [(fit.residual_sd**2 * (1 / m + 1 / fit.count), df)]
    if slope is None:
        terms.append(((distance * fit.slope_se) ** 2, df))
    terms += [((sd / mean) ** 2 / n / m**2, n - 1)
              for mean, sd, n in zip(means, within, counts, strict=True)]  # fmt: skip
    return Adjusted(observed - predicted, tuple(terms), distance)
