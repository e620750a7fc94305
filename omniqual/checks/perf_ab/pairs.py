"""The paired rule of perf-ab: each launch round puts both arms on the host at once, so what the
host does to a round (a neighbour, a slower instance, a drift over minutes) it does to both.
The unit is the round's log ratio of the arms' mean latencies, ``d = ln(candidate /
reference)``; over ``R`` rounds the two-sided ``confidence`` interval on the mean ratio is
``exp(mean(d) +- t(R - 1) * sd(d) / sqrt(R)) - 1``. Launches of one server differ by more than
its repetitions do, and both arms' launch effects are in ``sd(d)``, so the interval counts
them in full; the host's state shared by a round cancels in ``d``.

``failed`` (regressed) when the whole interval lies above ``threshold``; ``passed`` (within)
when it lies at or below it; otherwise undecided."""

import math
import statistics
from collections.abc import Sequence

from omniqual.loadgen.regression import Comparison, Decision, Direction
from omniqual.loadgen.trend import student_t_quantile

MIN_ROUNDS = 2


def paired_change(candidate: Sequence[float], reference: Sequence[float], *, threshold: float,
                  confidence: float) -> Comparison | None:  # fmt: skip
    """The candidate's relative change against the reference over paired rounds (each arm's
    mean latency per round, lower is better); None with fewer than :data:`MIN_ROUNDS` rounds
    or a figure that is not positive."""
    if len(candidate) != len(reference):
        raise ValueError("every round has both arms")
    if len(candidate) < MIN_ROUNDS or min(*candidate, *reference) <= 0:
        return None
    logs = [math.log(c / r) for c, r in zip(candidate, reference, strict=True)]
    rounds = len(logs)
    mean = statistics.fmean(logs)
    se = statistics.stdev(logs) / math.sqrt(rounds)
    half = student_t_quantile((1 + confidence) / 2, rounds - 1) * se
    low, high = math.expm1(mean - half), math.expm1(mean + half)
    decision = (Decision.REGRESSED if low > threshold else Decision.WITHIN if high <= threshold
                else Decision.UNDECIDED)  # fmt: skip
    return Comparison(math.expm1(mean), low, high, confidence, rounds - 1, threshold,
                      Direction.LOWER, decision)  # fmt: skip
