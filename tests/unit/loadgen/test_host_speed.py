"""The host speed readings: the reference workload is a positive, repeatable time; steal is a
share of the CPU time that passed; the reasons name the readings and the tolerance; a host
reading against the baseline's is a ratio with its own interval, which counts only when the
host is beyond what the baseline's own launches were read on."""

from __future__ import annotations

import pytest

from omniqual.loadgen.host_speed import (
    CpuTimes,
    HostRatio,
    HostSpeed,
    reference_workload_s,
    steal_reason,
    unsteady_reason,
)


def test_the_reference_workload_takes_a_positive_time() -> None:
    assert 0 < reference_workload_s(repeats=3) < 5.0


def test_steal_is_a_share_of_the_cpu_time_that_passed() -> None:
    start, end = CpuTimes(total=1000.0, steal=10.0), CpuTimes(total=1400.0, steal=30.0)
    assert end.steal_fraction_since(start) == pytest.approx(0.05)
    assert start.steal_fraction_since(start) == 0.0  # no time passed: nothing stolen
    assert CpuTimes.now().total > 0


def test_a_steady_host_within_tolerance_has_no_reason() -> None:
    speed = HostSpeed(0.0102, 0.0098, 0.01)
    assert speed.probe_s == pytest.approx(0.010)
    assert unsteady_reason(speed, 0.05, 0.02) is None
    assert steal_reason(speed, 0.0, 0.02) is None


def test_a_host_that_moved_during_the_measurement_names_both_halves() -> None:
    reason = unsteady_reason(HostSpeed(0.010, 0.0130, 0.0), 0.10, 0.02)
    assert reason is not None
    assert "10.0 ms in the first half of the measurement and 13.0 ms in the second" in reason
    assert "(+30%, tolerance 10%)" in reason


def test_a_host_a_quarter_slower_is_a_ratio_with_its_own_interval() -> None:
    readings = (0.0125, 0.0126, 0.0124, 0.0125, 0.0127, 0.0123)
    ratio = HostRatio.of(readings, 0.010, (), per_run=1)
    assert ratio.ratio == pytest.approx(1.25)
    assert ratio.df == 5 and ratio.log_se > 0
    low, high = ratio.interval(0.95)
    assert low < 1.25 < high
    assert ratio.differs(0.95)
    assert ratio.effect(0.95) == (1.0, pytest.approx(high))  # none of it, up to all of it


def test_a_host_read_as_the_baselines_launches_were_adds_nothing() -> None:
    # The baseline's launches were read 10 % apart: a run 5 % off their median is one of them.
    launch_probes = (0.0095, 0.0105, 0.0100, 0.0110, 0.0090, 0.0100)
    ratio = HostRatio.of((0.0105, 0.0104, 0.0106, 0.0105), 0.0100, launch_probes, per_run=3)
    assert not ratio.differs(0.95)
    assert ratio.effect(0.95) == (1.0, 1.0)


def test_a_faster_host_bounds_the_effect_below_one() -> None:
    ratio = HostRatio.of((0.0080, 0.0081, 0.0079, 0.0080), 0.0100, (), per_run=1)
    low, high = ratio.effect(0.95)
    assert high == 1.0 and low < 0.8


def test_readings_spread_over_the_measurement_are_read_by_half() -> None:
    # One neighbour's burst (the 14 ms reading) moves neither half's median.
    speed = HostSpeed.of((0.0100, 0.0140, 0.0101, 0.0099, 0.0100, 0.0102), 0.0)
    assert (speed.probe_before_s, speed.probe_after_s) == (0.0101, 0.0100)
    assert speed.probe_s == pytest.approx(0.01005)
    assert unsteady_reason(speed, 0.05, 0.02) is None
    assert speed.as_json()["readings"] == [0.0100, 0.0140, 0.0101, 0.0099, 0.0100, 0.0102]
    with pytest.raises(ValueError, match="before and after"):
        HostSpeed.of((0.01,), 0.0)


def test_steal_counts_only_beyond_what_the_baseline_saw() -> None:
    assert steal_reason(HostSpeed(0.010, 0.010, 0.08), 0.07, 0.02) is None
    reason = steal_reason(HostSpeed(0.010, 0.010, 0.10), 0.07, 0.02)
    assert reason is not None
    assert reason.startswith("host contended: the hypervisor stole 10.0% of CPU time")
    assert "against 7.0% when the baseline was set (tolerance 2% more)" in reason


def test_steal_alone_makes_a_measurement_unsteady() -> None:
    reason = unsteady_reason(HostSpeed(0.010, 0.010, 0.078), 0.10, 0.02)
    assert reason is not None
    assert reason == ("host contended: the hypervisor stole 7.8% of CPU time during the "
                      "measurement (tolerance 2%)")


def test_the_probe_of_an_avx2_capped_server_runs_capped_in_a_child() -> None:
    # An uncapped probe on an AVX512/AMX host reads ~45 % faster than the AVX2-capped server it
    # stands for; held to the same class it reads what the server's host class does.
    from omniqual.loadgen.host_speed import capped_reference_workload, reference_workload_s

    assert capped_reference_workload({}) is reference_workload_s
    probe = capped_reference_workload({"ATEN_CPU_CAPABILITY": "avx2"})
    assert probe is not reference_workload_s
    assert probe() > 0.0
