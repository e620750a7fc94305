from __future__ import annotations

import math

import pytest

from omniqual.loadgen.sufficiency import (
    allowed_overlatency,
    certify_slo,
    max_certifiable_percentile,
    required_samples,
    upper_confidence_bound,
)

# (percentile, zero-overlatency minimum h(0), LoadGen SingleStream minimum h(1)+1) at c = 0.99.
# 64 and 662 are LoadGen's own figures (mlperf.conf MultiStream min_query_count = 662).
LOADGEN_TABLE = [(50, 7, 11), (75, 17, 24), (90, 44, 64), (95, 90, 130), (99, 459, 662)]


@pytest.mark.parametrize(("percentile", "zero_over", "single_stream"), LOADGEN_TABLE)
def test_required_samples_match_loadgen_figures(
    percentile: float, zero_over: int, single_stream: int
) -> None:
    assert required_samples(percentile) == zero_over
    assert required_samples(percentile, overlatency=1) == single_stream


def test_zero_overlatency_minimum_has_closed_form() -> None:
    # p**n <= 1 - c  <=>  n >= ln(1 - c) / ln(p): 458.2 for p99, so 459.
    assert required_samples(99) == math.ceil(math.log(0.01) / math.log(0.99))
    assert required_samples(99.9, confidence=0.95) == math.ceil(math.log(0.05) / math.log(0.999))


def test_allowed_overlatency_is_the_inverse_of_required_samples() -> None:
    assert allowed_overlatency(458, 99) is None
    assert allowed_overlatency(459, 99) == 0
    assert allowed_overlatency(661, 99) == 0
    assert allowed_overlatency(662, 99) == 1
    for t in (0, 3, 10, 40):
        n = required_samples(95, overlatency=t)
        assert allowed_overlatency(n, 95) == t
        assert allowed_overlatency(n - 1, 95) == (t - 1 if t else None)
    # Far more samples tolerate overs approaching (but below) the 1 % the percentile allows.
    big = allowed_overlatency(100_000, 99)
    assert big is not None and 900 < big < 1000


def test_max_certifiable_percentile_inverse_view() -> None:
    # The anchor's inverse table (LoadGen SingleStream rule, one overlatency sample).
    assert max_certifiable_percentile(20, overlatency=1) == pytest.approx(71.1, abs=0.1)
    assert max_certifiable_percentile(100, overlatency=1) == pytest.approx(93.5, abs=0.1)
    assert max_certifiable_percentile(500, overlatency=1) == pytest.approx(98.7, abs=0.1)
    # Zero overs: p = (1 - c) ** (1 / n).
    assert max_certifiable_percentile(459) == pytest.approx(100 * 0.01 ** (1 / 459))
    assert (max_certifiable_percentile(459) or 0.0) >= 99.0
    assert (max_certifiable_percentile(458) or 0.0) < 99.0
    assert max_certifiable_percentile(3, overlatency=3) is None


def test_upper_confidence_bound_picks_the_right_order_statistic() -> None:
    values = [float(v) for v in range(1, 663)]  # 1 .. 662, shuffled order must not matter
    values.reverse()
    assert upper_confidence_bound(values[:458], 99) is None
    assert upper_confidence_bound(values[-459:], 99) == 459.0  # n = 459: the maximum
    assert upper_confidence_bound(values, 99) == 661.0  # one overlatency tolerated


def test_certify_slo_counts_failures_as_over() -> None:
    fast = [0.5] * 500
    ok = certify_slo(fast, 99, 1.0)
    assert ok.certified and ok.overlatency == 0 and ok.required == 459 and ok.shortfall == 0
    with_failures = certify_slo(fast, 99, 1.0, failures=2)
    assert with_failures.overlatency == 2 and with_failures.samples == 502
    assert not with_failures.certified
    assert with_failures.shortfall == required_samples(99, overlatency=2) - 502
    slow = certify_slo([0.5] * 400 + [2.0] * 100, 90, 1.0)
    assert not slow.certified and slow.overlatency == 100


@pytest.mark.parametrize(
    "call",
    [
        lambda: required_samples(100),
        lambda: required_samples(0),
        lambda: required_samples(99, confidence=1.0),
        lambda: required_samples(99, overlatency=-1),
    ],
)
def test_invalid_arguments(call: object) -> None:
    with pytest.raises(ValueError):
        call()  # type: ignore[operator]
