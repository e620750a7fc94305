"""A baseline's launches grouped by the session they were measured in: the unit a run is judged
on against launches from other sessions.

Launches of one run follow one another within minutes on one host and share its state, so they
do not scatter independently around the class's mean. Measured on two 2-vCPU guest classes: an
Intel guest's eleven runs of three to five launches spread 2-3 % within a run and 5 % between
runs; on an AMD EPYC guest three launches of one run read 0.097, 0.100 and 0.099 s where the
class baseline's sessions average 0.121 s with a host reading no different from theirs. Taken as
independent, ``m`` launches of one run shrink the host's share of the interval by ``sqrt(m)``,
which they do not have: a run on a fast host could then pass a 30 % regression. So:

* a **session** is the launches of one run (its ``run_id``);
* the baseline side is the mean of its session means with their spread ``s_S`` (``k`` sessions);
* the run judged is one session: the mean of its launch means, with their own scatter over
  ``m`` (one launch: its repetitions). Against the baseline its interval holds
  ``s_S**2 * (1 + 1/k)`` (a prediction for one new session, ``k - 1`` degrees of freedom) and
  the run's own term. ``s_S`` already holds the scatter of each baseline session's own launches,
  so the interval never comes out narrower than the sessions allow.

More launches in one run then narrow only the run's own term: what a host session adds is
measured once per run, and only more sessions in the baseline (``perf baseline update --add``
from runs on other days and hosts of the class) narrow that side.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from omniqual.loadgen.regression import Direction, Spread, compare_launches


@dataclass(frozen=True, slots=True)
class SessionLaunch:
    """One launch as a session sees it: its run, its mean, and its host reading if any."""

    run_id: str
    mean: float
    probe_s: float | None = None


@dataclass(frozen=True, slots=True)
class Session:
    """The launches of one run."""

    run_id: str
    means: tuple[float, ...]
    probes: tuple[float | None, ...]

    @property
    def mean(self) -> float:
        return statistics.fmean(self.means)

    @property
    def probe_s(self) -> float | None:
        """The mean of its launches' readings (log scale), or None when one was not read."""
        if not self.probes or any(p is None or p <= 0 for p in self.probes):
            return None
        return math.exp(statistics.fmean(math.log(p) for p in self.probes if p is not None))


def sessions(launches: Sequence[SessionLaunch]) -> tuple[Session, ...]:
    """``launches`` grouped by run, in the order each run first appears."""
    grouped: dict[str, list[SessionLaunch]] = {}
    for launch in launches:
        grouped.setdefault(launch.run_id, []).append(launch)
    return tuple(Session(run, tuple(x.mean for x in group), tuple(x.probe_s for x in group))
                 for run, group in grouped.items())  # fmt: skip


def session_spread(groups: Sequence[Session]) -> Spread:
    """The baseline side: its session means (at least two sessions)."""
    return Spread.of([s.mean for s in groups])


def within_session_sd(groups: Sequence[Session]) -> float | None:
    """How far launches of one session scatter around its mean, pooled over the sessions of
    more than one launch; None when every session is a single launch."""
    pooled = [(len(s.means) - 1, statistics.variance(s.means)) for s in groups if len(s.means) > 1]
    df = sum(d for d, _ in pooled)
    return math.sqrt(sum(d * v for d, v in pooled) / df) if df else None


def one_session(runs: Sequence[Spread]) -> Spread:
    """A run's launches (each its repetitions) as the one session it is: the mean of their
    means with their scatter; a single launch is its repetitions."""
    if not runs:
        raise ValueError("no launch to compare")
    return runs[0] if len(runs) == 1 else Spread.of([r.mean for r in runs])


def session_resolution(groups: Sequence[Session], *, within_sd: float, per_run: int,
                       repetitions: int, confidence: float) -> float:  # fmt: skip
    """The half-width (relative) of an unchanged server's typical interval against ``groups``:
    one new session of ``per_run`` launches of ``repetitions`` each, at the sessions' mean, its
    launches scattering as the baseline's own sessions' do (never less than one launch's mean
    scatters from ``within_sd``, one repetition's spread)."""
    if per_run < 1 or repetitions < 2:
        raise ValueError("a run needs at least one launch of at least two repetitions")
    spread = session_spread(groups)
    if per_run == 1:
        typical = Spread(repetitions, spread.mean, within_sd)
    else:
        own = within_sd / math.sqrt(repetitions)
        typical = Spread(per_run, spread.mean, max(own, within_session_sd(groups) or 0.0))
    return compare_launches([typical], spread, threshold=1.0, direction=Direction.LOWER,
                            confidence=confidence).high  # fmt: skip
