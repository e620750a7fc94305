"""The host fit: how far a baseline's launches followed the reference workload, and the interval
that may pass a run on a host reading slower (:mod:`omniqual.loadgen.host_fit`)."""

import math

import pytest

from omniqual.loadgen.host_fit import HostFit
from omniqual.loadgen.host_speed import HostRatio
from omniqual.loadgen.regression import (
    Decision,
    Direction,
    Spread,
    compare_launches,
    launches_cannot_decide,
)

# Launch-to-launch scatter the host does not explain (about 3 %, as on the 2-core guest).
SCATTER = [0.03, -0.02, 0.01, -0.035, 0.025, -0.01, 0.0, 0.02, -0.025, 0.015, -0.005, -0.015]
# Readings of the baseline's launches, across two days' hosts (3.4 to 4.1 ms).
PROBES = [3.4e-3, 3.45e-3, 3.5e-3, 3.55e-3, 3.6e-3, 3.65e-3, 3.7e-3, 3.75e-3, 3.85e-3, 3.95e-3,
          4.0e-3, 4.1e-3]  # fmt: skip
BASE_S = 0.060  # the server's latency on a host reading 3.6 ms


def following(slope: float) -> list[float]:
    """Launch means that followed their readings with ``slope``, plus the scatter."""
    pairs = zip(PROBES, SCATTER, strict=True)
    return [BASE_S * (p / 3.6e-3) ** slope * math.exp(e) for p, e in pairs]


def launches_at(mean: float) -> list[Spread]:
    """Three launches of a run at ``mean`` (each with a 2 % repetition spread)."""
    return [Spread(3, mean * f, 0.02 * mean) for f in (0.99, 1.0, 1.01)]


def judged(runs: list[Spread], probe: float, fit: HostFit | None) -> tuple[Decision, float]:
    means = following(1.0)
    host = HostRatio.of([probe] * 4 + [probe * 1.01] * 4, sorted(PROBES)[len(PROBES) // 2],
                        PROBES, per_run=len(runs))  # fmt: skip
    c = compare_launches(runs, Spread.of(means), threshold=0.15, direction=Direction.LOWER,
                         confidence=0.95, host=host, fit=fit,
                         probes=[probe] * len(runs))  # fmt: skip
    return c.decision, c.change


def test_the_fit_recovers_how_far_the_launches_followed_their_readings() -> None:
    fit = HostFit.of(PROBES, following(1.0))
    assert fit is not None and fit.count == len(PROBES)
    assert fit.slope == pytest.approx(1.0, abs=0.3)
    assert fit.residual_sd == pytest.approx(0.022, abs=0.01)
    flat = HostFit.of(PROBES, following(0.0))
    assert flat is not None and abs(flat.slope) < 0.3


def test_no_fit_from_too_few_launches_or_readings_that_never_moved() -> None:
    assert HostFit.of(PROBES[:3], following(1.0)[:3]) is None
    assert HostFit.of([3.6e-3] * 6, following(1.0)[:6]) is None
    assert HostFit.of([0.0] * 12, following(1.0)) is None  # launches never read


def test_the_slope_used_is_held_to_none_or_all_of_the_hosts_change() -> None:
    steep = HostFit(10, 1.6, 0.1, 0.03, math.log(3.6e-3), math.log(BASE_S))
    assert steep.used_slope == 1.0
    negative = HostFit(10, -0.4, 0.1, 0.03, math.log(3.6e-3), math.log(BASE_S))
    assert negative.used_slope == 0.0


def test_an_unchanged_server_on_a_host_reading_11pct_slower_passes_only_with_the_fit() -> None:
    probe = 3.76e-3 * 1.11  # 11 % above the launches' mean reading
    server = BASE_S * (probe / 3.6e-3)  # it followed its host, as the launches did
    fit = HostFit.of(PROBES, following(1.0))
    assert judged(launches_at(server), probe, None)[0] is Decision.UNDECIDED
    decision, change = judged(launches_at(server), probe, fit)
    assert decision is Decision.WITHIN
    assert change == pytest.approx(0.0, abs=0.05)  # read at the baseline's mean at that host


def test_a_slowed_server_on_a_slower_host_is_never_passed_and_a_2x_one_fails() -> None:
    probe = 3.76e-3 * 1.11
    fit = HostFit.of(PROBES, following(1.0))
    at_host = BASE_S * (probe / 3.6e-3)
    assert judged(launches_at(at_host * 1.3), probe, fit)[0] is not Decision.WITHIN
    assert judged(launches_at(at_host * 1.2), probe, fit)[0] is not Decision.WITHIN
    assert judged(launches_at(at_host * 2.0), probe, fit)[0] is Decision.REGRESSED


def test_launches_that_never_followed_their_readings_credit_the_host_nothing() -> None:
    probe = 3.76e-3 * 1.11
    means = following(0.0)
    fit = HostFit.of(PROBES, means)
    assert fit is not None
    runs = launches_at(BASE_S * 1.11)
    c = compare_launches(runs, Spread.of(means), threshold=0.15, direction=Direction.LOWER,
                         confidence=0.95, fit=fit, probes=[probe] * 3)  # fmt: skip
    assert c.decision is Decision.UNDECIDED  # +11 % the baseline never showed a host causing


def test_on_a_faster_host_the_fit_never_applies() -> None:
    probe = 3.3e-3  # below every launch's reading
    fit = HostFit.of(PROBES, following(1.0))
    assert fit is not None and not fit.applies([probe] * 3)
    runs = launches_at(BASE_S * 1.2)  # a regression a faster host may partly hide
    means = Spread.of(following(1.0))
    with_fit = compare_launches(runs, means, threshold=0.15, direction=Direction.LOWER,
                                confidence=0.95, fit=fit, probes=[probe] * 3)  # fmt: skip
    without = compare_launches(runs, means, threshold=0.15, direction=Direction.LOWER,
                               confidence=0.95)  # fmt: skip
    assert with_fit == without


def test_the_adjusted_interval_says_what_it_credited_the_host_with() -> None:
    probe = 3.76e-3 * 1.11
    fit = HostFit.of(PROBES, following(1.0))
    assert fit is not None
    c = compare_launches(launches_at(BASE_S * probe / 3.6e-3), Spread.of(following(1.0)),
                         threshold=0.15, direction=Direction.LOWER, confidence=0.95, fit=fit,
                         probes=[probe] * 3)  # fmt: skip
    assert c.host_slope == fit.used_slope
    assert c.adjusted_by is not None and "slope" in c.describe()
    assert f"{len(PROBES)} sessions" in c.describe()


def test_more_repetitions_are_not_refused_while_the_fit_may_still_pass_the_run() -> None:
    probe = 3.76e-3 * 1.11
    fit = HostFit.of(PROBES, following(1.0))
    at_host = BASE_S * probe / 3.6e-3
    host = HostRatio.of([probe] * 8, 3.675e-3, PROBES, per_run=3)
    common = {"threshold": 0.15, "direction": Direction.LOWER, "confidence": 0.95,
              "earlier": (at_host, at_host), "host": host}  # fmt: skip
    last = Spread.of([at_host * 0.98, at_host * 1.02, at_host])
    assert launches_cannot_decide(last, Spread.of(following(1.0)), **common) is not None
    assert launches_cannot_decide(last, Spread.of(following(1.0)), **common, fit=fit,
                                  probes=[probe] * 3) is None  # fmt: skip


def test_a_run_the_bounds_pass_but_the_fit_does_not_is_undecided_and_shows_why() -> None:
    # Launches that never followed their readings (a flat fit, with a wide slope error) and a
    # host reading far slower: the distance from the fitted readings widens the adjusted
    # interval past the threshold, while the bounds alone would pass the run.
    means = following(0.0)
    fit = HostFit.of(PROBES, means)
    assert fit is not None
    probe = 3.76e-3 * 1.6
    runs = launches_at(BASE_S * 1.08)
    bounds = compare_launches(runs, Spread.of(means), threshold=0.15,
                              direction=Direction.LOWER, confidence=0.95)  # fmt: skip
    assert bounds.decision is Decision.WITHIN
    c = compare_launches(runs, Spread.of(means), threshold=0.15, direction=Direction.LOWER,
                         confidence=0.95, fit=fit, probes=[probe] * 3)  # fmt: skip
    assert c.decision is Decision.UNDECIDED
    assert c.adjusted_by is not None and c.high > 0.15


def test_a_slowed_server_fails_through_the_fit_where_the_hosts_bounds_cannot() -> None:
    # Launches on hosts reading 3.4-4.1 ms never followed their readings; a host reading 20 %
    # slower than their mean shields nothing it never showed: a 30 % slower server fails.
    means = following(0.0)
    fit = HostFit.of(PROBES, means)
    assert fit is not None and fit.upper_slope(0.95) < 0.5
    probe = 3.76e-3 * 1.2
    host = HostRatio.of([probe] * 4 + [probe * 1.01] * 4, 3.675e-3, PROBES, per_run=3)
    runs = launches_at(BASE_S * 1.3)
    common = {"threshold": 0.15, "direction": Direction.LOWER, "confidence": 0.95, "host": host}
    bounds = compare_launches(runs, Spread.of(means), **common)  # type: ignore[arg-type]
    assert bounds.decision is Decision.UNDECIDED  # all of +20 % may be the host's
    c = compare_launches(runs, Spread.of(means), **common, fit=fit,  # type: ignore[arg-type]
                         probes=[probe] * 3)  # fmt: skip
    assert c.decision is Decision.REGRESSED and c.low > 0.15
    assert c.host_slope == fit.upper_slope(0.95)
    assert c.adjusted_by is not None and "upper end" in c.adjusted_by
    # ... and the run is not stopped as one more launches cannot decide.
    last = Spread.of([BASE_S * 1.28, BASE_S * 1.3, BASE_S * 1.32])
    assert launches_cannot_decide(last, Spread.of(means), **common,  # type: ignore[arg-type]
                                  earlier=(BASE_S * 1.3, BASE_S * 1.3), fit=fit,
                                  probes=[probe] * 3) is None  # fmt: skip


@pytest.mark.parametrize("host_slower", [1.1, 1.25, 1.5])
def test_an_unchanged_server_that_follows_its_host_is_never_failed_through_the_fit(
    host_slower: float,
) -> None:
    # The launches followed their readings fully: the upper slope credits all of a host's
    # slowness, so neither the server at its host's speed nor one 10 % beyond it fails.
    fit = HostFit.of(PROBES, following(1.0))
    assert fit is not None and fit.upper_slope(0.95) == 1.0
    probe = 3.76e-3 * host_slower
    at_host = BASE_S * probe / 3.6e-3
    for server in (at_host, at_host * 1.1):
        assert judged(launches_at(server), probe, fit)[0] is not Decision.REGRESSED
