"""A run is one session against the baseline's sessions: launches of one run share their host's
state, so their number never narrows the host's share of the interval."""

from __future__ import annotations

import pytest

from omniqual.loadgen.regression import Decision, Direction, Spread, compare_launches
from omniqual.loadgen.sessions import (
    SessionLaunch,
    one_session,
    session_resolution,
    session_spread,
    sessions,
    within_session_sd,
)

# Eleven runs of three launches (the shape of the committed Intel baseline): launches of one
# run 2 % apart, runs 6 % apart.
OFFSETS = (-0.08, -0.05, -0.03, -0.02, 0.0, 0.0, 0.01, 0.03, 0.04, 0.05, 0.07)
BASELINE = [SessionLaunch(f"run{i}", 0.100 * (1 + o) * (1 + d))
            for i, o in enumerate(OFFSETS) for d in (-0.02, 0.0, 0.02)]  # fmt: skip


def launches(mean: float) -> list[Spread]:
    """Five launches of one run, 1.6 % apart, each of three repetitions."""
    return [Spread(3, mean * (1 + d), mean * 0.01) for d in (-0.02, -0.01, 0.0, 0.01, 0.02)]


def test_launches_are_grouped_by_their_run_in_order() -> None:
    groups = sessions(BASELINE)
    assert [g.run_id for g in groups] == [f"run{i}" for i in range(11)]
    assert all(len(g.means) == 3 for g in groups)
    assert groups[0].mean == pytest.approx(0.092)
    assert within_session_sd(groups) == pytest.approx(0.002, rel=0.1)
    assert within_session_sd(sessions([SessionLaunch("a", 1.0), SessionLaunch("b", 2.0)])) is None


def test_a_regression_on_a_fast_host_is_never_passed() -> None:
    # A host session 18 % faster than the baseline's (measured on an AMD guest), a build 30 %
    # slower: +6.6 %. Read as five independent launches the interval is narrow enough to pass
    # it at 15 %; read as the one session it is, it is not passed.
    run = launches(0.100 * 0.82 * 1.3)
    naive = compare_launches(run, Spread.of([x.mean for x in BASELINE]), threshold=0.15,
                             direction=Direction.LOWER, confidence=0.95)  # fmt: skip
    assert naive.decision is Decision.WITHIN  # what launch-by-launch reading concluded
    judged = compare_launches([one_session(run)], session_spread(sessions(BASELINE)),
                              threshold=0.15, direction=Direction.LOWER,
                              confidence=0.95)  # fmt: skip
    assert judged.decision is not Decision.WITHIN
    assert judged.high > 0.15


def test_an_unchanged_server_passes_and_a_doubled_one_fails() -> None:
    spread = session_spread(sessions(BASELINE))
    same = compare_launches([one_session(launches(0.100))], spread, threshold=0.15,
                            direction=Direction.LOWER, confidence=0.95)  # fmt: skip
    assert same.decision is Decision.WITHIN
    doubled = compare_launches([one_session(launches(0.200))], spread, threshold=0.15,
                               direction=Direction.LOWER, confidence=0.95)  # fmt: skip
    assert doubled.decision is Decision.REGRESSED


def test_more_launches_in_one_run_do_not_shrink_the_resolution_below_the_sessions() -> None:
    groups = sessions(BASELINE)
    one = session_resolution(groups, within_sd=0.003, per_run=1, repetitions=3,
                             confidence=0.95)  # fmt: skip
    five = session_resolution(groups, within_sd=0.003, per_run=5, repetitions=3,
                              confidence=0.95)  # fmt: skip
    floor = 1.96 * session_spread(groups).stdev / 0.100
    assert one > floor and five > floor
    assert five == pytest.approx(one, rel=0.25)
