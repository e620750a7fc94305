"""The paired rule: the interval on the mean log ratio of the rounds, t with rounds - 1 degrees
of freedom, read against the threshold."""

import math

import pytest

from omniqual.checks.perf_ab.pairs import paired_change
from omniqual.loadgen.regression import Decision


def test_the_interval_is_the_t_interval_of_the_rounds_log_ratios() -> None:
    reference = [0.100, 0.120, 0.090]
    ratios = [1.30, 1.34, 1.26]
    c = paired_change([r * x for r, x in zip(reference, ratios, strict=True)], reference,
                      threshold=0.15, confidence=0.95)  # fmt: skip
    assert c is not None
    logs = [math.log(x) for x in ratios]
    mean = sum(logs) / 3
    sd = math.sqrt(sum((v - mean) ** 2 for v in logs) / 2)
    half = 4.302652729911275 * sd / math.sqrt(3)  # t(0.975, 2)
    assert c.change == pytest.approx(math.expm1(mean))
    assert (c.low, c.high) == pytest.approx((math.expm1(mean - half), math.expm1(mean + half)))
    assert c.df == 2 and c.decision is Decision.REGRESSED


def test_rounds_that_agree_with_their_reference_are_within() -> None:
    c = paired_change([0.1, 0.2, 0.15], [0.101, 0.198, 0.15], threshold=0.15, confidence=0.95)
    assert c is not None and c.decision is Decision.WITHIN


def test_one_round_or_a_zero_figure_decides_nothing() -> None:
    assert paired_change([0.1], [0.1], threshold=0.15, confidence=0.95) is None
    assert paired_change([0.1, 0.0], [0.1, 0.1], threshold=0.15, confidence=0.95) is None
    with pytest.raises(ValueError):
        paired_change([0.1, 0.1], [0.1], threshold=0.15, confidence=0.95)
