"""The perf gate's percentiles: a p95 or p99 of a few dozen closed-loop samples is no claim. The
sample-sufficiency rule of soak and bench (the binomial bound of
:mod:`omniqual.loadgen.sufficiency`, at its 99 % confidence) decides: short of it, the result
carries ``"insufficient (n < N)"`` in place of the number (the observed value kept as
informational beside it) and records no measurement of it, and a baseline judging such a
percentile is refused."""

from __future__ import annotations

from pathlib import Path

from omniqual.domain.outcomes import GateOutcome
from tests.unit.checks.perf.test_perf_gate import document, run

SAME = [0.1, 0.101, 0.099, 0.100]


def test_short_percentiles_are_informational_not_claims(tmp_path: Path) -> None:
    outcome, harness = run(tmp_path, SAME, baseline={})
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    doc = document(outcome, harness)
    # 3 repetitions of 4 requests: 12 samples; p95 needs 90, p99 459.
    assert doc["result"]["latency_p95"] == "insufficient (n < 90)"
    assert doc["result"]["latency_p99"] == "insufficient (n < 459)"
    assert isinstance(doc["result"]["latency_median"], float)  # p50 needs 7: supported
    informational = doc["result"]["percentiles"]["latency_p95"]
    assert informational["samples"] == 12 and informational["required"] == 90
    assert informational["supported"] is False and informational["observed"] > 0
    assert doc["repetitions"][1]["latency_p99"] == "insufficient (n < 459)"
    names = {m.name for m in outcome.measurements}
    assert "latency_p95" not in names and "latency_mean" in names


def test_a_baseline_judging_a_short_percentile_is_refused(tmp_path: Path) -> None:
    outcome, _ = run(tmp_path, SAME, baseline={"metric": "latency_p99"})
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert outcome.reasons[0].startswith("latency_p99 is no claim")
    assert "4 samples per repetition" in outcome.reasons[0] and "459" in outcome.reasons[0]
