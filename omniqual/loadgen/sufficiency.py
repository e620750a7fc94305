"""How many samples a percentile claim needs: MLPerf LoadGen's binomial early-stopping bound.

Each request is a Bernoulli trial that "passes" (is at or under the bound) with probability p,
the claimed percentile. A claim "the true p-th percentile is at most this bound" survives at
confidence c with n samples of which t exceeded the bound iff a system that only just fails
(pass rate p, tolerance d = 0 as in LoadGen) would show at most t overs in n trials with
probability <= 1 - c, i.e. ``P[Binomial(n, 1 - p) <= t] <= 1 - c``. LoadGen writes this as
``I_p(h, t + 1) <= 1 - c`` with h = n - t passing samples; the two are the same quantity.

Consequences used elsewhere: with t = 0 the sample maximum is an upper confidence bound for the
percentile once n >= ln(1 - c) / ln(p) (459 for p99 at c = 0.99); the largest admissible t for a
given n makes the order statistic ``sorted[n - 1 - t]`` the tightest such bound. LoadGen's
SingleStream report is one order statistic more conservative and demands t >= 1
(``required_samples(p, overlatency=1)``: 662 for p99, 64 for p90).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

DEFAULT_CONFIDENCE = 0.99


def _check(percentile: float, confidence: float) -> None:
    if not 0 < percentile < 100:
        raise ValueError(f"percentile must be in (0, 100), got {percentile}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")


def _log_terms(n: int, fail: float, upto: int) -> np.ndarray:
    """log P[Binomial(n, fail) = k] for k = 0..upto, by the pmf ratio recurrence."""
    k = np.arange(upto, dtype=np.float64)
    steps = np.log((n - k) / (k + 1)) + (math.log(fail) - math.log1p(-fail))
    head = n * math.log1p(-fail)
    return np.concatenate(([head], head + np.cumsum(steps)))


def _log_cdf(t: int, n: int, fail: float) -> float:
    """log P[Binomial(n, fail) <= t]."""
    if t >= n:
        return 0.0
    terms = _log_terms(n, fail, t)
    top = float(terms.max())
    return top + math.log(float(np.exp(terms - top).sum()))


def required_samples(
    percentile: float, *, confidence: float = DEFAULT_CONFIDENCE, overlatency: int = 0
) -> int:
    """Smallest n (passing plus ``overlatency`` over-bound samples) that supports the claim.

    LoadGen's h(t) is ``required_samples(p, overlatency=t) - t``.
    """
    _check(percentile, confidence)
    if overlatency < 0:
        raise ValueError("overlatency must not be negative")
    fail = 1.0 - percentile / 100.0
    limit = math.log1p(-confidence)

    def enough(n: int) -> bool:
        return _log_cdf(overlatency, n, fail) <= limit

    low, high = overlatency, max(2 * overlatency, 1)
    while not enough(high):
        low, high = high, high * 2
    while high - low > 1:  # invariant: not enough(low), enough(high)
        mid = (low + high) // 2
        if enough(mid):
            high = mid
        else:
            low = mid
    return high


def allowed_overlatency(
    n: int, percentile: float, *, confidence: float = DEFAULT_CONFIDENCE
) -> int | None:
    """Largest over-bound count that n samples tolerate; None if even zero is too many."""
    _check(percentile, confidence)
    if n <= 0:
        return None
    fail = 1.0 - percentile / 100.0
    terms = _log_terms(n, fail, n)
    top = float(terms.max())
    with np.errstate(divide="ignore"):  # underflowed leading terms give log(0) = -inf, harmless
        log_cdf = top + np.log(np.cumsum(np.exp(terms - top)))
    admissible = int(np.searchsorted(log_cdf, math.log1p(-confidence), side="right"))
    return admissible - 1 if admissible > 0 else None


def max_certifiable_percentile(
    n: int, *, confidence: float = DEFAULT_CONFIDENCE, overlatency: int = 0
) -> float | None:
    """Highest percentile that n samples with ``overlatency`` overs can support (None if none)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n <= overlatency:
        return None
    limit = math.log1p(-confidence)
    if overlatency == 0:
        return 100.0 * math.exp(limit / n)  # closed form of p**n = 1 - c
    low, high = 0.0, 1.0  # P[Bin(n, 1-p) <= t] rises with p; find where it crosses 1 - c
    for _ in range(100):
        mid = (low + high) / 2
        if _log_cdf(overlatency, n, 1.0 - mid) <= limit:
            low = mid
        else:
            high = mid
    return 100.0 * low if low > 0 else None


def upper_confidence_bound(
    values: Sequence[float], percentile: float, *, confidence: float = DEFAULT_CONFIDENCE
) -> float | None:
    """Order statistic that bounds the true percentile from above at ``confidence``, if any."""
    t = allowed_overlatency(len(values), percentile, confidence=confidence)
    if t is None:
        return None
    return float(np.sort(np.asarray(values, dtype=np.float64))[len(values) - 1 - t])


@dataclass(frozen=True, slots=True)
class SloCertificate:
    """LoadGen Server-style check of "p-th percentile <= bound" on one run."""

    percentile: float
    bound_s: float
    confidence: float
    samples: int
    overlatency: int  # samples over the bound, failures included
    required: int  # samples needed given that overlatency count
    certified: bool
    missed: bool = False
    """The bound is exceeded at the same confidence: a system whose percentile sits exactly on
    the bound would show this many overs or more with probability <= 1 - c. Neither certified
    nor missed is inconclusive: more samples decide, the point estimate never does."""

    @property
    def shortfall(self) -> int:
        """Further all-passing samples that would certify the claim (0 when certified)."""
        return max(0, self.required - self.samples)


def certify_slo(
    latencies_s: Sequence[float],
    percentile: float,
    bound_s: float,
    *,
    failures: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> SloCertificate:
    """Certify a latency SLO; failed requests count as over the bound (they met no SLO)."""
    over = failures + sum(1 for value in latencies_s if value > bound_s)
    samples = len(latencies_s) + failures
    required = required_samples(percentile, confidence=confidence, overlatency=over)
    missed = slo_missed(samples, over, percentile, confidence=confidence)
    return SloCertificate(
        percentile, bound_s, confidence, samples, over, required, samples >= required, missed
    )


def slo_missed(
    samples: int, overlatency: int, percentile: float, *, confidence: float = DEFAULT_CONFIDENCE
) -> bool:
    """Whether ``overlatency`` of ``samples`` over the bound show the p-th percentile above it at
    ``confidence``: ``P[Binomial(n, 1 - p) >= t] <= 1 - c`` (the mirror of the certificate)."""
    _check(percentile, confidence)
    if overlatency <= 0 or samples <= 0:
        return False
    at_most_one_fewer = _log_cdf(overlatency - 1, samples, 1.0 - percentile / 100.0)
    tail = -math.expm1(at_most_one_fewer)  # P[Bin >= t] = 1 - P[Bin <= t - 1]
    return tail <= 1.0 - confidence


def percentile_interval(
    values: Sequence[float], percentile: float, *, confidence: float = DEFAULT_CONFIDENCE
) -> tuple[float | None, float | None]:
    """Distribution-free bounds on the true p-th percentile, each holding at ``confidence``:
    order statistics, None where the samples are too few for that side."""
    _check(percentile, confidence)
    ordered = np.sort(np.asarray(values, dtype=np.float64))
    n = len(ordered)
    upper = upper_confidence_bound(values, percentile, confidence=confidence)
    # Mirror image: the p-th percentile of x is the (100 - p)-th of -x, bounded from above.
    flipped = upper_confidence_bound([-v for v in ordered], 100.0 - percentile,
                                     confidence=confidence)  # fmt: skip
    lower = -flipped if flipped is not None and n else None
    return lower, upper
