"""The host speed readings: the reference workload is a positive, repeatable time; steal is a
share of the CPU time that passed; the reasons name the readings and the tolerance."""

from __future__ import annotations

import pytest

from omniqual.loadgen.host_speed import (
    CpuTimes,
    HostSpeed,
    drift_reason,
    reference_workload_s,
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
    assert drift_reason(speed, 0.010, 0.0, 0.05, 0.02) is None


def test_drift_names_both_readings_and_the_tolerance() -> None:
    reason = drift_reason(HostSpeed(0.010, 0.0104, 0.0), 0.0080, None, 0.05, 0.02)
    assert reason is not None
    assert "10.0 ms in the first half of the measurement against 8.0 ms" in reason
    assert "(+25%, tolerance 5%)" in reason


def test_the_after_reading_counts_as_much_as_the_before() -> None:
    reason = drift_reason(HostSpeed(0.0100, 0.0104, 0.0), 0.0096, None, 0.05, 0.02)
    assert reason is not None and "in the second half of the measurement" in reason


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
    assert drift_reason(HostSpeed(0.010, 0.010, 0.08), 0.010, 0.07, 0.05, 0.02) is None
    reason = drift_reason(HostSpeed(0.010, 0.010, 0.10), 0.010, 0.07, 0.05, 0.02)
    assert reason is not None
    assert reason.startswith("host contended: the hypervisor stole 10.0% of CPU time")
    assert "against 7.0% when the baseline was set (tolerance 2% more)" in reason


def test_steal_alone_makes_a_measurement_unsteady() -> None:
    reason = unsteady_reason(HostSpeed(0.010, 0.010, 0.078), 0.10, 0.02)
    assert reason is not None
    assert reason == ("host contended: the hypervisor stole 7.8% of CPU time during the "
                      "measurement (tolerance 2%)")
