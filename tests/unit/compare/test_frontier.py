"""The latency–memory frontier: hand-computed dominance, ties, exclusions, budget and degeneracy."""

from __future__ import annotations

import math

import pytest

from omniqual.compare.frontier import (
    FrontierResult,
    Recommendation,
    SweepPoint,
    pareto,
    recommend,
)

MIB = 2**20


def _p(name: str, latency: float | None, mib: float | None, valid: bool = True) -> SweepPoint:
    return SweepPoint(name, latency, None if mib is None else mib * MIB, valid)


# Hand-drawn sweep (latency s, memory MiB); lower is better on both.
#   a (1.0, 400)  fastest, biggest                      -> frontier
#   b (2.0, 300)                                        -> frontier
#   c (2.0, 300)  exact tie with b                      -> frontier (ties are both kept)
#   d (2.5, 300)  same memory as b, slower              -> dominated by b (b sorts before c)
#   e (3.0, 200)                                        -> frontier
#   f (3.0, 250)  same latency as e, more memory        -> dominated by e
#   g (5.0, 100)  slowest, smallest                     -> frontier
#   h (6.0, 450)  worse than everything                 -> dominated by g (all frontier points
#                 dominate it; the first by memory ascending is named)
KNOWN = [
    _p("a", 1.0, 400),
    _p("b", 2.0, 300),
    _p("c", 2.0, 300),
    _p("d", 2.5, 300),
    _p("e", 3.0, 200),
    _p("f", 3.0, 250),
    _p("g", 5.0, 100),
    _p("h", 6.0, 450),
]


def test_known_dominance_gives_the_hand_computed_frontier_ties_included() -> None:
    result = pareto(KNOWN)
    assert result.frontier == ("g", "e", "b", "c", "a")
    assert dict(result.dominated) == {"f": "e", "d": "b", "h": "g"}
    assert dict(result.excluded) == {}
    assert result.degenerate is None


def test_frontier_does_not_depend_on_input_order() -> None:
    shuffled = [KNOWN[i] for i in (7, 3, 0, 5, 2, 6, 1, 4)]
    assert pareto(shuffled) == pareto(KNOWN)


def test_every_dominator_really_dominates_and_no_frontier_point_is_dominated() -> None:
    by_name = {p.name: p for p in KNOWN}
    result = pareto(KNOWN)
    for loser, winner in result.dominated.items():
        w, lo = by_name[winner], by_name[loser]
        assert w.latency_s is not None and lo.latency_s is not None
        assert w.memory_bytes is not None and lo.memory_bytes is not None
        assert w.latency_s <= lo.latency_s and w.memory_bytes <= lo.memory_bytes
        assert (w.latency_s, w.memory_bytes) != (lo.latency_s, lo.memory_bytes)
        assert winner in result.frontier
    assert set(result.frontier) | set(result.dominated) == set(by_name)


def test_equal_memory_tie_is_ordered_by_latency_then_name() -> None:
    result = pareto([_p("z", 1.0, 100), _p("y", 1.0, 100), _p("x", 2.0, 50)])
    assert result.frontier == ("x", "y", "z")


def test_invalid_refused_and_missing_figure_points_are_excluded_with_reasons() -> None:
    points = [
        _p("resident", 1.0, 300),
        _p("layer-2", 2.0, 200),
        SweepPoint("pinned", None, None, False, "refused to start: pin_memory needs a GPU"),
        SweepPoint("no-series", 1.5, None, False, "memory series missing"),
        SweepPoint("silent", 0.5, 10 * MIB, False),
        _p("no-latency", None, 100),
        _p("no-memory", 0.1, None),
        _p("nan", math.nan, 100),
        _p("negative", 1.0, -5),
    ]
    result = pareto(points)
    assert result.frontier == ("layer-2", "resident")
    assert dict(result.excluded) == {
        "pinned": "invalid: refused to start: pin_memory needs a GPU",
        "no-series": "invalid: memory series missing",
        "silent": "invalid measurement (no reason given)",
        "no-latency": "no latency figure",
        "no-memory": "no memory figure",
        "nan": "latency figure nan is not a finite non-negative number",
        "negative": "memory figure -5242880 is not a finite non-negative number",
    }
    # An invalid point that would have dominated everything is never judged.
    assert "silent" not in result.frontier and "silent" not in result.dominated


def test_repeated_names_are_refused() -> None:
    with pytest.raises(ValueError, match="repeated: a"):
        pareto([_p("a", 1.0, 1), _p("a", 2.0, 2)])


@pytest.mark.parametrize(
    ("budget_mib", "expected"),
    [
        (None, "a"),  # no budget: everything fits, the fastest frontier point
        (1000, "a"),
        (400, "a"),  # the budget is inclusive
        (399, None),  # b and c tie exactly: the measurement picks neither
        (250, "e"),
        (100, "g"),
        (99, None),  # nothing fits
    ],
)
def test_recommendation_under_a_budget(budget_mib: float | None, expected: str | None) -> None:
    result = pareto(KNOWN)
    budget = None if budget_mib is None else budget_mib * MIB
    assert recommend(result, KNOWN, budget).name == expected


def test_recommendation_never_picks_a_dominated_or_excluded_point() -> None:
    points = [*KNOWN, SweepPoint("fast-but-invalid", 0.1, 10 * MIB, False, "parity failed")]
    result = pareto(points)
    # f fits 260 MiB and is as fast as e, but e dominates it.
    assert recommend(result, points, 260 * MIB).name == "e"


def test_recommendation_with_an_empty_frontier_is_none() -> None:
    points = [SweepPoint("refused", None, None, False, "refused")]
    assert recommend(pareto(points), points, None) == Recommendation(None, "no frontier point")


def test_recommendation_refuses_points_that_do_not_match_the_result() -> None:
    with pytest.raises(ValueError, match="absent from the points: a"):
        recommend(FrontierResult(frontier=("a",)), [], None)


def test_offload_costing_memory_and_latency_is_stated_not_shaped() -> None:
    # The embedded CPU case: host and "device" memory are one, so offload adds copies.
    points = [
        _p("resident", 1.0, 300),
        _p("layer-0", 3.0, 340),
        _p("layer-2", 2.0, 320),
        _p("model", 2.5, 330),
        SweepPoint("layer-default", None, None, False, "refused to start: pin_memory"),
    ]
    result = pareto(points, baseline="resident")
    assert result.frontier == ("resident",)
    assert result.degenerate == (
        "every offload point uses more memory than the resident point resident (1 s, 300.0 MiB): "
        "3 offload point(s) peaked at 320.0 MiB to 340.0 MiB; resident is also the fastest, "
        "so offload costs latency and saves none"
    )


def test_offload_costing_memory_but_saving_latency_keeps_both_on_the_frontier() -> None:
    points = [_p("resident", 2.0, 300), _p("layer-1", 1.0, 310)]
    result = pareto(points, baseline="resident")
    assert result.frontier == ("resident", "layer-1")
    assert result.degenerate == (
        "every offload point uses more memory than the resident point resident (2 s, 300.0 MiB): "
        "1 offload point(s) peaked at 310.0 MiB"
    )


def test_one_point_dominating_every_other_is_named() -> None:
    points = [_p("x", 1.0, 100), _p("y", 2.0, 100), _p("z", 1.0, 200)]
    assert pareto(points).degenerate == (
        "one point dominates every other: x (1 s, 100.0 MiB) is both the fastest and the "
        "smallest of 3 measured points, so there is no trade-off here"
    )


def test_all_tied_frontier_is_named() -> None:
    points = [_p("x", 1.0, 100), _p("y", 1.0, 100)]
    result = pareto(points)
    assert result.frontier == ("x", "y")
    assert result.degenerate == (
        "the 2 frontier points measured exactly the same latency and memory, "
        "1 s and 100.0 MiB: they are tied"
    )


def test_too_few_points_are_degenerate() -> None:
    assert pareto([]).degenerate == (
        "no point has a valid latency and memory measurement: there is no frontier"
    )
    assert pareto([_p("only", 1.5, 64), SweepPoint("r", None, None, False)]).degenerate == (
        "only one point was measured validly, only (1.5 s, 64.0 MiB): no trade-off to show"
    )


def test_a_real_trade_off_is_not_degenerate_even_with_a_baseline() -> None:
    points = [_p("resident", 1.0, 300), _p("layer-1", 2.0, 200), _p("layer-0", 3.0, 100)]
    result = pareto(points, baseline="resident")
    assert result.frontier == ("layer-0", "layer-1", "resident")
    assert result.degenerate is None


def _r(name: str, low: float, high: float, mib: float) -> SweepPoint:
    """A point with its repetitions' latency range (median in the middle)."""
    return SweepPoint(name, (low + high) / 2, mib * MIB, True, latency_range=(low, high))


def test_points_within_their_spread_do_not_dominate_and_get_no_recommendation() -> None:
    # Medians 0.07 and 0.075 s, but the ranges overlap; memory 705 vs 720 MiB is 2.1 %, within
    # the 5 % resolution. By medians alone resident would dominate and be recommended.
    points = [_r("resident", 0.06, 0.08, 705), _r("layer-r0", 0.065, 0.085, 720)]
    result = pareto(points, baseline="resident", memory_resolution=0.05)
    assert result.frontier == ("resident", "layer-r0")
    assert dict(result.dominated) == {}
    assert result.indistinguishable == (("resident", "layer-r0"),)
    pick = recommend(result, points, None)
    assert pick.name is None
    assert pick.reason.startswith("indistinguishable: resident is not faster than layer-r0")
    assert result.degenerate is not None and "not apart" in result.degenerate


def test_a_gap_beyond_the_spread_still_dominates_and_is_recommended() -> None:
    points = [_r("resident", 0.06, 0.08, 705), _r("cpu-offload", 0.2, 0.22, 760)]
    result = pareto(points, baseline="resident", memory_resolution=0.05)
    assert result.frontier == ("resident",)
    assert dict(result.dominated) == {"cpu-offload": "resident"}
    assert recommend(result, points, None) == Recommendation(
        "resident", "the fastest frontier point within the budget")


def test_memory_lower_beyond_the_resolution_dominates_an_overlapping_latency() -> None:
    points = [_r("resident", 0.06, 0.08, 705), _r("layer-r0", 0.065, 0.085, 400)]
    result = pareto(points, memory_resolution=0.05)
    assert result.frontier == ("layer-r0",)
    assert dict(result.dominated) == {"resident": "layer-r0"}
