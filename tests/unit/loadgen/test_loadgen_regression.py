"""The regression rule: a Welch interval on the relative change of two means, read against a
relative threshold in the metric's bad direction."""

import pytest

from omniqual.loadgen.host_speed import HostRatio
from omniqual.loadgen.regression import (
    Decision,
    Direction,
    Spread,
    compare,
    compare_launches,
    launches_cannot_decide,
    resolution,
    welch_df,
)

BASE = Spread.of([1.00, 1.02, 0.98])


def decide(values: list[float], direction: Direction = Direction.LOWER) -> Decision:
    return compare(Spread.of(values), BASE, threshold=0.10, direction=direction,
                   confidence=0.95).decision  # fmt: skip


def test_interval_matches_a_hand_computed_welch_interval() -> None:
    # Equal n=3 and equal sd 0.02: se = sqrt(2 * 0.02**2 / 3), df = 4, t(0.975, 4) = 2.7764.
    c = compare(Spread.of([1.20, 1.22, 1.18]), BASE, threshold=0.10, direction=Direction.LOWER,
                confidence=0.95)  # fmt: skip
    half = 2.7764451 * (2 * 0.02**2 / 3) ** 0.5
    assert c.df == 4
    assert c.change == pytest.approx(0.20)
    assert (c.low, c.high) == pytest.approx((0.20 - half, 0.20 + half), abs=1e-6)


def test_whole_interval_beyond_the_threshold_regressed() -> None:
    assert decide([1.20, 1.22, 1.18]) is Decision.REGRESSED


def test_whole_interval_inside_the_threshold_is_within() -> None:
    assert decide([1.03, 1.01, 1.05]) is Decision.WITHIN
    assert decide([0.70, 0.71, 0.69]) is Decision.WITHIN  # faster is never a regression


def test_straddling_the_threshold_is_undecided() -> None:
    assert decide([0.95, 1.30, 1.10]) is Decision.UNDECIDED


def test_higher_is_better_flips_the_bad_direction() -> None:
    assert decide([0.80, 0.81, 0.79], Direction.HIGHER) is Decision.REGRESSED
    assert decide([1.20, 1.22, 1.18], Direction.HIGHER) is Decision.WITHIN


def test_no_spread_on_either_side_is_a_point_interval() -> None:
    flat = Spread.of([1.0, 1.0])
    assert welch_df(flat, flat) is None
    c = compare(Spread.of([1.2, 1.2]), flat, threshold=0.1, direction=Direction.LOWER,
                confidence=0.95)  # fmt: skip
    assert c.low == c.high == pytest.approx(0.2) and c.decision is Decision.REGRESSED


def test_a_spread_needs_two_values() -> None:
    with pytest.raises(ValueError):
        Spread.of([1.0])


def test_launch_to_launch_spread_is_a_prediction_interval_for_one_new_launch() -> None:
    # Launch means 1.00, 1.08, 0.92: s_L = 0.08, k = 3; a new launch's mean spreads around
    # their mean by s_L * sqrt(1 + 1/3); the candidate adds 0.02**2 / 3.
    launches = Spread.of([1.00, 1.08, 0.92])
    c = compare(Spread.of([1.20, 1.22, 1.18]), BASE, threshold=0.10, direction=Direction.LOWER,
                confidence=0.95, launches=launches)  # fmt: skip
    variance = 0.02**2 / 3 + 0.08**2 * (1 + 1 / 3)
    df = variance**2 / ((0.02**2 / 3) ** 2 / 2 + (0.08**2 * 4 / 3) ** 2 / 2)
    assert c.df == int(df)
    assert c.change == pytest.approx(0.20)
    half = c.high - c.change
    assert half == pytest.approx(4.302653 * variance**0.5, rel=1e-4)  # t(0.975, 2)


def test_a_launch_spread_as_wide_as_the_change_leaves_it_undecided() -> None:
    # 20 % slower than the pooled repetitions, which alone would call it regressed; but the
    # baseline's launches were 8 % apart from one another: one new launch cannot tell.
    slower = Spread.of([1.20, 1.21, 1.19, 1.20])
    assert compare(slower, BASE, threshold=0.10, direction=Direction.LOWER,
                   confidence=0.95).decision is Decision.REGRESSED  # fmt: skip
    launches = Spread.of([1.00, 1.08, 0.92, 1.04, 0.96])
    assert compare(slower, BASE, threshold=0.10, direction=Direction.LOWER, confidence=0.95,
                   launches=launches).decision is Decision.UNDECIDED  # fmt: skip


LAUNCHES_8PCT = Spread.of([1.00, 1.08, 0.92, 1.04, 0.96])


def cannot_decide(values: list[float], launches: Spread = LAUNCHES_8PCT,
                  direction: Direction = Direction.LOWER) -> float | None:  # fmt: skip
    return launches_cannot_decide(Spread.of(values), launches, threshold=0.10,
                                  direction=direction, confidence=0.95)  # fmt: skip


def test_launches_wider_than_the_distance_to_the_threshold_leave_nothing_to_measure() -> None:
    # s_L = 0.0632 over k = 5 launch means: the floor is 1.96 * s_L * sqrt(1.2) = 13.6 %. A
    # launch settling near +5 % (give or take 1.2 %) stays within it of the 10 % threshold.
    floor = cannot_decide([1.05, 1.06, 1.04, 1.05])
    assert floor == pytest.approx(1.959964 * 0.0632456 * 1.2**0.5, rel=1e-4)
    # The interval at this count straddles the threshold too, and is wider than the floor.
    c = compare(Spread.of([1.05, 1.06, 1.04, 1.05]), BASE, threshold=0.10,
                direction=Direction.LOWER, confidence=0.95, launches=LAUNCHES_8PCT)  # fmt: skip
    assert c.decision is Decision.UNDECIDED and c.high - c.change > floor


def test_more_repetitions_may_still_decide_far_from_the_threshold_or_on_tight_launches() -> None:
    assert cannot_decide([1.40, 1.41, 1.39]) is None  # 30 % past the threshold: beyond the floor
    assert cannot_decide([0.80, 0.81, 0.79]) is None  # 30 % on the good side
    tight = Spread.of([1.00, 1.01, 0.99])
    assert cannot_decide([1.08, 1.09, 1.07], launches=tight) is None


def test_a_launch_whose_own_mean_may_still_move_is_measured_on() -> None:
    # Near the threshold but scattered: its mean may yet settle beyond the floor's reach.
    assert cannot_decide([0.95, 1.35, 1.05]) is None


def test_higher_is_better_reads_the_floor_around_the_lower_threshold() -> None:
    assert cannot_decide([0.95, 0.96, 0.94, 0.95], direction=Direction.HIGHER) is not None
    assert cannot_decide([1.05, 1.06, 1.04, 1.05], direction=Direction.HIGHER) is None


# --- m launches per run, the baseline's resolution, and a host that differs -----------------

LAUNCHES_6PCT = Spread.of([1.00, 1.08, 0.92, 1.04, 0.96])  # s_L = 0.0632 over n = 5


def flat(value: float, count: int = 3) -> Spread:
    """A launch whose repetitions agree exactly (no within-launch term)."""
    return Spread(count, value, 0.0)


def test_m_launches_shrink_the_new_runs_term_by_root_m() -> None:
    # The mean of m new launch means spreads around the baseline's by s_L * sqrt(1/m + 1/n).
    one = compare_launches([flat(1.0)], LAUNCHES_6PCT, threshold=0.10,
                           direction=Direction.LOWER, confidence=0.95)  # fmt: skip
    three = compare_launches([flat(1.0)] * 3, LAUNCHES_6PCT, threshold=0.10,
                             direction=Direction.LOWER, confidence=0.95)  # fmt: skip
    s = 0.0632456
    assert three.df == 4
    assert three.high == pytest.approx(2.776445 * s * (1 / 3 + 1 / 5) ** 0.5, rel=1e-4)
    assert one.high == pytest.approx(2.776445 * s * (1 + 1 / 5) ** 0.5, rel=1e-4)
    assert one.decision is Decision.UNDECIDED and three.decision is Decision.UNDECIDED


def test_one_launch_is_the_prediction_interval_of_compare() -> None:
    run = Spread.of([1.20, 1.22, 1.18])
    a = compare(run, BASE, threshold=0.10, direction=Direction.LOWER, confidence=0.95,
                launches=LAUNCHES_6PCT)  # fmt: skip
    b = compare_launches([run], LAUNCHES_6PCT, threshold=0.10, direction=Direction.LOWER,
                         confidence=0.95)  # fmt: skip
    assert (a.low, a.high, a.df) == pytest.approx((b.low, b.high, b.df))


def test_resolution_is_the_half_width_of_an_unchanged_runs_typical_interval() -> None:
    within = 0.05
    half = resolution(LAUNCHES_6PCT, within_sd=within, per_run=3, repetitions=3,
                      confidence=0.95)  # fmt: skip
    typical = [Spread(3, LAUNCHES_6PCT.mean, within)] * 3
    c = compare_launches(typical, LAUNCHES_6PCT, threshold=0.5, direction=Direction.LOWER,
                         confidence=0.95)  # fmt: skip
    assert c.high == pytest.approx(half) and c.low == pytest.approx(-half)
    more = resolution(LAUNCHES_6PCT, within_sd=within, per_run=5, repetitions=3,
                      confidence=0.95)  # fmt: skip
    assert more < half  # more launches per run resolve a smaller change


def test_a_slower_host_may_explain_none_or_all_of_a_slowdown() -> None:
    launches = Spread.of([1.00, 1.01, 0.99])
    run = [flat(2.5)]  # twice as slow on a host a quarter slower (latency tracked the host)
    host = HostRatio(ratio=1.25, log_se=0.0, df=None)
    c = compare_launches(run, launches, threshold=0.10, direction=Direction.LOWER,
                         confidence=0.95, host=host)  # fmt: skip
    # Both intervals at 97.5 % (the 5 % is split between them).
    plain = compare_launches(run, launches, threshold=0.10, direction=Direction.LOWER,
                             confidence=0.975)  # fmt: skip
    assert c.high == pytest.approx(plain.high)  # the host explains none of it
    assert c.low == pytest.approx((1 + plain.low) / 1.25 - 1)  # ... or all of it
    assert c.decision is Decision.REGRESSED
    assert (c.host_low, c.host_high) == (1.0, 1.25)
    assert "host" in c.describe()


def test_a_faster_host_never_lets_an_unchanged_latency_pass() -> None:
    launches = Spread.of([1.00, 1.01, 0.99])
    host = HostRatio(ratio=0.8, log_se=0.0, df=None)
    same = compare_launches([flat(1.0)], launches, threshold=0.10, direction=Direction.LOWER,
                            confidence=0.95, host=host)  # fmt: skip
    assert same.decision is Decision.UNDECIDED and same.high > 0.10 and same.low < 0.10
    faster = compare_launches([flat(0.8)], launches, threshold=0.10, direction=Direction.LOWER,
                              confidence=0.95, host=host)  # fmt: skip
    assert faster.decision is Decision.WITHIN  # it ran as much faster as its host


def test_higher_is_better_reads_a_slower_host_the_other_way() -> None:
    launches = Spread.of([1.00, 1.01, 0.99])
    host = HostRatio(ratio=1.25, log_se=0.0, df=None)
    c = compare_launches([flat(0.8)], launches, threshold=0.10, direction=Direction.HIGHER,
                         confidence=0.95, host=host)  # fmt: skip
    plain = compare_launches([flat(0.8)], launches, threshold=0.10, direction=Direction.HIGHER,
                             confidence=0.975)  # fmt: skip
    assert c.low == pytest.approx(plain.low)
    assert c.high == pytest.approx((1 + plain.high) * 1.25 - 1)
    assert c.decision is Decision.UNDECIDED  # -20 % throughput on a host 25 % slower


def test_a_host_within_its_noise_of_the_baselines_adds_no_term() -> None:
    launches = Spread.of([1.00, 1.01, 0.99])
    near = HostRatio(ratio=1.02, log_se=0.02, df=20)
    c = compare_launches([flat(1.0)], launches, threshold=0.10, direction=Direction.LOWER,
                         confidence=0.95, host=near)  # fmt: skip
    plain = compare_launches([flat(1.0)], launches, threshold=0.10, direction=Direction.LOWER,
                             confidence=0.95)  # fmt: skip
    assert (c.low, c.high) == pytest.approx((plain.low, plain.high))
    assert c.host_low is None


def test_more_launches_cannot_decide_once_the_last_launch_cannot_move_the_mean_enough() -> None:
    # Two launches measured at +5 %; the third settles near +5 % too: the floor of three
    # launches' interval (1.96 * s_L * sqrt(1/3 + 1/5)) keeps it across the threshold.
    floor = launches_cannot_decide(Spread.of([1.05, 1.06, 1.04, 1.05]), LAUNCHES_6PCT,
                                   threshold=0.10, direction=Direction.LOWER, confidence=0.95,
                                   earlier=(1.05, 1.05))  # fmt: skip
    assert floor == pytest.approx(1.959964 * 0.0632456 * (1 / 3 + 1 / 5) ** 0.5, rel=1e-4)
