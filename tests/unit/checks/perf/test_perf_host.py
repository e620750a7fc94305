"""The perf gate with the server on the measuring host: a host whose reference workload reads
slower or faster than the baseline's widens the interval by as much as the host may explain
(from none of the change to all of it), so a slower host is never a regression of the build and
a faster one never hides one, yet a server far beyond both still fails. A host that changed or
was contended during the repetitions is invalid, and a baseline that never probed its host
cannot judge a probed run."""

from __future__ import annotations

from pathlib import Path

import pytest

from omniqual.checks.perf import PerfCheck
from omniqual.domain.outcomes import GateOutcome
from omniqual.loadgen.host_speed import CpuTimes
from tests.unit.checks.perf.test_perf_gate import TEST_CPU, document, run

SLOWER = [0.1, 0.120, 0.121, 0.119]  # 20 % slower than the baseline (0.100 s)
SAME = [0.1, 0.101, 0.099, 0.100]


def test_on_a_host_as_fast_as_the_baselines_a_slower_server_still_fails(tmp_path: Path) -> None:
    outcome, harness = run(tmp_path, SLOWER, baseline={"host_probe_s": 0.010},
                           host=((0.0101, 0.0099), 0.0))  # fmt: skip
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    host = document(outcome, harness)["judgement"]["host"]
    assert host["probe_before_s"] == 0.0101 and host["probe_after_s"] == 0.0099
    assert host["steal_fraction"] == 0.0
    named = {m.name: m.value for m in outcome.measurements}
    assert named["host_reference_workload_before"] == 0.0101
    assert named["host_reference_workload_after"] == 0.0099
    assert named["host_steal_fraction"] == 0.0


def test_a_slower_host_widens_the_interval_instead_of_failing_the_build(tmp_path: Path) -> None:
    # 20 % slower on a host 25 % slower: the host may explain all of it, or none.
    outcome, harness = run(tmp_path, SLOWER, baseline={"host_probe_s": 0.010},
                           host=((0.0125, 0.0125), 0.0))  # fmt: skip
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert outcome.reasons[0].startswith("inconclusive after 3 repetitions")
    assert "host's reference workload +25% against the baseline's" in outcome.reasons[0]
    judgement = document(outcome, harness)["judgement"]
    comparison = judgement["comparison"]
    assert comparison["decision"] == "undecided"
    assert comparison["host_low"] == 1.0 and comparison["host_high"] == pytest.approx(1.25)
    assert comparison["low"] < 0.0 < 0.10 < comparison["high"]
    assert judgement["host"]["ratio"] == pytest.approx(1.25)


def test_twice_as_slow_a_server_fails_on_a_host_a_quarter_slower(tmp_path: Path) -> None:
    for work in (0.200, 0.250):  # latency that did not track the host, and latency that did
        outcome, harness = run(tmp_path / str(work), [0.1, work, work, work],
                               baseline={"host_probe_s": 0.010},
                               host=((0.0125, 0.0125), 0.0))  # fmt: skip
        assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
        assert outcome.reasons[0].startswith("latency_mean regressed")
        comparison = document(outcome, harness)["judgement"]["comparison"]
        assert comparison["low"] > 0.10  # even if the host explained all it could


def test_an_unchanged_server_that_ran_as_fast_as_its_faster_host_passes(tmp_path: Path) -> None:
    # The host reads 25 % faster (0.8 of the baseline's time) and so did the server.
    outcome, _ = run(tmp_path, [0.1, 0.080, 0.080, 0.080], baseline={"host_probe_s": 0.010},
                     host=((0.0080, 0.0080), 0.0))  # fmt: skip
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons


def test_an_unchanged_server_never_fails_on_a_faster_host(tmp_path: Path) -> None:
    # Its latency did not move with the host: a regression the faster host hides, or a server
    # that does not track the reference workload. Neither a pass nor a fail.
    outcome, harness = run(tmp_path, SAME, baseline={"host_probe_s": 0.010},
                           host=((0.0080, 0.0080), 0.0))  # fmt: skip
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert outcome.reasons[0].startswith("inconclusive")
    assert "host's reference workload -20% against the baseline's" in outcome.reasons[0]
    comparison = document(outcome, harness)["judgement"]["comparison"]
    assert comparison["low"] < 0.10 < comparison["high"]


def test_a_host_that_changed_during_the_repetitions_is_invalid(tmp_path: Path) -> None:
    outcome, _ = run(tmp_path, SAME, baseline={"host_probe_s": 0.010},
                     host=((0.0100, 0.0130), 0.0))  # fmt: skip
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert outcome.reasons[0].startswith("host speed changed during the measurement")


def test_more_hypervisor_steal_than_the_baseline_saw_is_invalid(tmp_path: Path) -> None:
    baseline = {"host_probe_s": 0.010, "host_steal_fraction": 0.05}
    outcome, _ = run(tmp_path, SAME, baseline=baseline, host=((0.0100, 0.0100), 0.06))
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons  # as much as it saw, about
    outcome, _ = run(tmp_path / "busier", SAME, baseline=baseline, host=((0.0100, 0.0100), 0.08))
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert outcome.reasons[0].startswith("host contended: the hypervisor stole 8.0%")


def test_a_baseline_that_never_probed_its_host_cannot_judge_a_local_server(tmp_path: Path) -> None:
    outcome, _ = run(tmp_path, SLOWER, baseline={}, host=((0.0100, 0.0100), 0.0))
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert outcome.reasons[0].startswith("host speed not probed when the baseline was set")


def test_a_baseline_probed_with_another_reference_workload_cannot_judge(tmp_path: Path) -> None:
    baseline = {"host_probe_s": 0.010, "host_probe_workload": "float32 matmul 256x256 + tanh"}
    outcome, _ = run(tmp_path, SLOWER, baseline=baseline, host=((0.0100, 0.0100), 0.0))
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert outcome.reasons[0].startswith("host speed not probed with this run's reference")
    assert "it timed float32 matmul 256x256 + tanh" in outcome.reasons[0]


def test_a_probed_baseline_cannot_judge_a_server_on_another_host(tmp_path: Path) -> None:
    outcome, _ = run(tmp_path, SLOWER, baseline={"host_probe_s": 0.010})
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert "this run's server is not on this host" in outcome.reasons[0]


def test_without_a_baseline_an_unsteady_host_is_named_too(tmp_path: Path) -> None:
    outcome, _ = run(tmp_path, SAME, host=((0.0100, 0.0150), 0.0))
    assert outcome.outcome is GateOutcome.INVALID
    assert "does not exist" in outcome.reasons[0]
    assert outcome.reasons[1].startswith("host speed changed during the measurement")


def test_one_check_keeps_no_host_reading_from_one_run_to_the_next(tmp_path: Path) -> None:
    check = PerfCheck(cpu_class=lambda: TEST_CPU, fingerprint=lambda: {"host": "test"},
                      host_probe=lambda: 0.010,
                      cpu_times=lambda: CpuTimes(total=100.0, steal=0.0), settle_s=0.0)  # fmt: skip
    local, harness = run(tmp_path / "local", SAME, check=check, local=True)
    assert document(local, harness)["judgement"]["host"] is not None
    remote, harness = run(tmp_path / "remote", SAME, check=check, local=False)
    assert document(remote, harness)["judgement"]["host"] is None  # nothing probed, nothing kept


# Baseline launches read across hosts 10 % apart each way, their means following the reading.
FOLLOWING_PROBES = (0.0090, 0.0095, 0.0100, 0.0105, 0.0110)
FOLLOWING_MEANS = (0.0905, 0.0948, 0.1002, 0.1049, 0.1098)


def test_a_slower_host_is_read_through_the_baselines_own_launches(tmp_path: Path) -> None:
    # The host reads 20 % slower than the launches' middle and the server ran 20 % slower with
    # it: the bounds alone cannot pass it, the launches' fit to their readings can.
    work = [0.1, 0.120, 0.121, 0.119]
    fitted = {"host_probe_s": 0.010, "launch_means": FOLLOWING_MEANS,
              "launch_probes": FOLLOWING_PROBES}  # fmt: skip
    outcome, harness = run(tmp_path / "fit", work, baseline=fitted,
                           host=((0.0120, 0.0120), 0.0))  # fmt: skip
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    comparison = document(outcome, harness)["judgement"]["comparison"]
    assert comparison["host_slope"] == pytest.approx(1.0, abs=0.05)
    assert "5 sessions followed its reference workload" in comparison["adjusted_by"]
    named = {m.name: m.value for m in outcome.measurements}
    assert named["host_fit_slope"] == comparison["host_slope"]
    unread = {"host_probe_s": 0.010, "launch_means": FOLLOWING_MEANS}
    plain, _ = run(tmp_path / "bounds", work, baseline=unread,
                   host=((0.0120, 0.0120), 0.0))  # fmt: skip
    assert plain.outcome is GateOutcome.INVALID, plain.reasons  # no readings beside its launches
    slowed, _ = run(tmp_path / "slowed", [0.1, 0.156, 0.157, 0.155], baseline=fitted,
                    host=((0.0120, 0.0120), 0.0))  # fmt: skip
    assert slowed.outcome is not GateOutcome.PASSED, slowed.reasons  # 30 % beyond its host
