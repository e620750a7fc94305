from __future__ import annotations

from collections.abc import Callable

import pytest

from omniqual.loadgen.records import LoadRun, RecordStatus
from omniqual.loadgen.stats import (
    ReasonCode,
    ValidityPolicy,
    Verdict,
    summarize_run,
    summarize_values,
)

MakeRun = Callable[..., LoadRun]


def test_percentiles_carry_counts_and_sufficiency() -> None:
    values = [float(v) for v in range(1, 501)]  # 1 .. 500
    summary = summarize_values("lat", values, (50, 99))
    p50, p99 = summary.at(50), summary.at(99)
    assert summary.samples == 500 and summary.min_s == 1.0 and summary.max_s == 500.0
    assert p50.value_s == pytest.approx(250.5)
    assert p99.value_s == pytest.approx(495.01)
    assert p50.samples == p99.samples == 500
    assert p50.required == 7 and p99.required == 459
    assert p50.supported and p99.supported
    assert p99.upper_bound_s == 500.0  # 500 samples tolerate no overs at p99: the max
    assert p50.upper_bound_s is not None and p50.value_s is not None
    assert p50.value_s < p50.upper_bound_s < 300
    small = summarize_values("lat", values[:100], (99,))
    assert not small.at(99).supported and small.at(99).upper_bound_s is None
    empty = summarize_values("lat", [], (50,))
    assert empty.samples == 0 and empty.at(50).value_s is None
    with pytest.raises(KeyError):
        summary.at(90)


def test_good_run_is_valid(make_run: MakeRun) -> None:
    run = make_run([0.2] * 700, lag_s=0.001)
    summary = summarize_run(run)
    assert summary.validity.verdict is Verdict.VALID
    assert summary.validity.reasons == ()
    assert summary.counts.ok == 700 and summary.counts.planned == 700
    assert summary.latency_from_schedule.at(99).value_s == pytest.approx(0.2)
    assert summary.latency_from_send.at(50).value_s == pytest.approx(0.199)
    assert summary.issue_lag.at(50).value_s == pytest.approx(0.001)
    assert summary.rates.offered == 10.0 and summary.rates.issue_fidelity == pytest.approx(1.0)
    assert summary.max_certifiable_percentile is not None
    assert summary.max_certifiable_percentile > 99.3


def test_too_few_samples_is_invalid_for_that_claim_only(make_run: MakeRun) -> None:
    summary = summarize_run(make_run([0.2] * 100))
    reasons = summary.validity.reasons
    assert summary.validity.verdict is Verdict.INVALID
    # 100 samples support p50 (needs 7) and p95 (needs 90) but not p99 (needs 459).
    assert [r.code for r in reasons] == [ReasonCode.TOO_FEW_SAMPLES]
    assert summary.latency_from_schedule.at(95).supported
    assert "p99 needs >= 459 successful samples" in reasons[-1].detail
    assert "highest certifiable: p95.5" in reasons[-1].detail


def test_failures_do_not_count_as_samples(make_run: MakeRun) -> None:
    statuses = [RecordStatus.OK] * 450 + [RecordStatus.ERROR] * 20 + [RecordStatus.TIMEOUT] * 5
    summary = summarize_run(make_run([0.2] * 475, statuses=statuses))
    assert summary.counts.ok == 450 and summary.counts.error == 20
    assert summary.counts.timeout == 5
    assert summary.latency_from_schedule.samples == 450
    assert [r.code for r in summary.validity.reasons] == [ReasonCode.TOO_FEW_SAMPLES]


def test_lag_short_run_and_rate_reasons(make_run: MakeRun) -> None:
    statuses = [RecordStatus.OK] * 600 + [RecordStatus.NOT_ISSUED] * 10
    run = make_run([0.2] * 610, statuses=statuses, lag_s=0.05, achieved_issue_rate=9.0)
    policy = ValidityPolicy(
        claimed_percentiles=(50,), min_completion_ratio=0.99, min_count=1000, min_duration_s=100
    )
    summary = summarize_run(run, policy)
    codes = [r.code for r in summary.validity.reasons]
    assert codes == [
        ReasonCode.SCHEDULE_FELL_BEHIND,
        ReasonCode.RUN_TOO_SHORT,  # 10 never sent
        ReasonCode.RUN_TOO_SHORT,  # last issued slot at 60 s < 100 s
        ReasonCode.RUN_TOO_SHORT,  # 600 issued < 1000
        ReasonCode.RATE_BELOW_BOUND,  # 9 of the planned 10 per second
    ]
    assert "p99 issue lag 50.00 ms exceeds 10.00 ms" in summary.validity.reasons[0].detail
    assert summary.counts.not_issued == 10
    assert summary.rates.issue_fidelity == pytest.approx(0.9)
