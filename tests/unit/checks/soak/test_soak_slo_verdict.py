"""The soak's latency SLO is three-valued: passed only when the bound holds at the stated
confidence, failed only when it is missed at that confidence, otherwise invalid (inconclusive)
with the percentile's interval; and a miss in a phase run within the saturation estimate's
precision of it, where the server did not keep up, is the estimate's error (invalid), and one
while the hypervisor stole the server's host is the host's (invalid)."""

from __future__ import annotations

from omniqual.checks.soak.judge import PhaseEvidence, judge_phase
from omniqual.loadgen.records import LoadRun
from omniqual.loadgen.sufficiency import percentile_interval, slo_missed
from tests.unit.checks.soak.test_soak_sufficiency import CALIBRATION, Send, _params, _phase


def _judge(run: LoadRun, factor: float = 0.5, precision: float | None = None,
           steal: float | None = None, **phase: object) -> tuple[list[str], list[str]]:  # fmt: skip
    params = _params(requests=40, factor=factor, **phase)
    evidence = PhaseEvidence(params.phases[0], 0.5, run, (), 5.0 * CALIBRATION.mean_service_s,
                             precision, steal)  # fmt: skip
    found, _ = judge_phase(evidence, params.validity)
    return found.failures, found.invalid


def test_slo_missed_mirrors_the_certificate() -> None:
    assert not slo_missed(40, 0, 90, confidence=0.95)
    assert not slo_missed(40, 5, 90, confidence=0.95)  # 4 expected at p90 exactly: no evidence
    assert slo_missed(40, 10, 90, confidence=0.95)  # P[Bin(40, .1) >= 10] ~ 0.004
    assert not slo_missed(10, 2, 90, confidence=0.95)


def test_percentile_interval_brackets_the_sample_percentile() -> None:
    values = [float(v) for v in range(1, 101)]
    lower, upper = percentile_interval(values, 90, confidence=0.95)
    assert lower is not None and upper is not None
    assert lower < 90.0 < upper
    # Five samples: all five lie under the true p99 with probability 0.99**5 < 0.951, so the
    # maximum bounds it from below; nothing bounds it from above.
    assert percentile_interval(values[:5], 99, confidence=0.95) == (5.0, None)


def test_a_clear_miss_fails_at_the_stated_confidence() -> None:
    params = _params(requests=40)
    run = _phase(params, Send(lambda i: 6.0 if i % 3 == 0 else 0.5), rate=0.5)  # a third over
    failures, invalid = _judge(run)
    assert len(failures) == 1 and "missed at 95% confidence" in failures[0]
    assert not invalid


def test_a_miss_while_the_hypervisor_stole_the_host_is_not_a_verdict() -> None:
    params = _params(requests=40)
    run = _phase(params, Send(lambda i: 6.0 if i % 3 == 0 else 0.5), rate=0.5)
    failures, invalid = _judge(run, steal=0.072)
    assert not failures
    assert len(invalid) == 1 and "host contended: the hypervisor stole 7.2%" in invalid[0]
    # Steal within the tolerance leaves the miss a failure.
    failures, invalid = _judge(run, steal=0.01)
    assert len(failures) == 1 and not invalid


def test_a_point_estimate_over_the_bound_near_it_is_inconclusive_not_failed() -> None:
    params = _params(requests=40)
    # 5 of 40 over: the sample p90 is over the 5 s bound, yet a server whose p90 sits exactly
    # on the bound shows 5 or more overs in 40 about 37 % of the time.
    over = {3, 11, 19, 27, 35}
    run = _phase(params, Send(lambda i: 6.0 if i in over else 0.5), rate=0.5)
    failures, invalid = _judge(run)
    assert not failures
    assert len(invalid) == 1 and "inconclusive at 95% confidence: p90 in [" in invalid[0]


def test_a_near_phase_miss_without_keeping_up_is_the_saturation_estimates_error() -> None:
    params = _params(requests=40)
    # Every request slow: completions lag far behind the offered 0.5/s.
    run = _phase(params, Send(lambda _i: 30.0), rate=0.5)
    failures, invalid = _judge(run, factor=0.85, precision=0.3)
    assert not failures
    assert any("known only to ±30%" in reason for reason in invalid)
    # The same run in a phase far below the estimate is the server's miss.
    failures, _ = _judge(run, factor=0.5, precision=0.3)
    assert failures and "missed at 95% confidence" in failures[0]
