"""The perf gate on a GPU row: the one-thread CPU reference workload measures the wrong device
there, so it is never run and never vetoes or widens anything; the GPU's clocks and throttle
reasons are recorded beside the repetitions when NVML can be read, and the result says when
they could not be."""

from __future__ import annotations

from pathlib import Path

import pytest

from omniqual.checks.perf import PerfCheck
from omniqual.domain.outcomes import GateOutcome
from omniqual.loadgen.host_speed import CpuTimes
from tests.unit.checks.perf.test_perf_gate import TEST_CPU, document, run

GPU = "1x-h100-80gb"
SLOWER = [0.1, 0.120, 0.121, 0.119]
SAME = [0.1, 0.101, 0.099, 0.100]
CLOCKS = ({"index": 0, "sm_clock_mhz": 1980, "sm_clock_max_mhz": 1980,
           "throttle_reasons": ["gpu_idle"], "temperature_c": 41},)  # fmt: skip


def never_probe() -> float:
    raise AssertionError("the CPU reference workload ran for a GPU row")


def gpu_check(readings: object = CLOCKS, gpus: tuple[object, ...] = ()) -> PerfCheck:
    return PerfCheck(cpu_class=lambda: TEST_CPU,
                     fingerprint=lambda: {"host": "test", "gpus": list(gpus)},
                     host_probe=never_probe, cpu_times=lambda: CpuTimes(100.0, 0.0),
                     settle_s=0.0, gpu_reading=lambda: readings)  # type: ignore[arg-type]  # fmt: skip


def test_a_gpu_row_is_judged_without_the_cpu_probe(tmp_path: Path) -> None:
    # The baseline was once set with a CPU probe: on a GPU row that reading says nothing.
    baseline = {"hardware": GPU, "host_probe_s": 0.010}
    slower, harness = run(tmp_path / "slower", SLOWER, baseline=baseline, check=gpu_check(),
                          local=True, hardware=GPU)  # fmt: skip
    assert slower.outcome is GateOutcome.FAILED, slower.reasons
    judgement = document(slower, harness)["judgement"]
    assert judgement["host"] is None
    assert judgement["gpu"]["readings"][0]["devices"] == list(CLOCKS)
    assert "CPU reference workload not used" in judgement["gpu"]["note"]
    same, _ = run(tmp_path / "same", SAME, baseline=baseline, check=gpu_check(), local=True,
                  hardware=GPU)  # fmt: skip
    assert same.outcome is GateOutcome.PASSED, same.reasons


def test_without_nvml_the_gpu_clocks_are_not_recorded_and_it_says_so(tmp_path: Path) -> None:
    outcome, harness = run(tmp_path, SAME, baseline={"hardware": GPU}, check=gpu_check(None),
                           local=True, hardware=GPU)  # fmt: skip
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    gpu = document(outcome, harness)["judgement"]["gpu"]
    assert gpu["readings"] == []
    assert "not recorded" in gpu["note"] and "nvidia-ml-py" in gpu["note"]


def test_a_cpu_row_on_a_host_with_a_gpu_is_not_probed_either(tmp_path: Path) -> None:
    outcome, harness = run(tmp_path, SLOWER, baseline={}, local=True,
                           check=gpu_check(gpus=({"index": 0, "name": "H100"},)))  # fmt: skip
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    assert document(outcome, harness)["judgement"]["host"] is None


class FakeNvml:
    """The NVML calls the reading makes, for one device throttled by power and heat."""

    NVML_CLOCK_SM = 1
    NVML_TEMPERATURE_GPU = 0
    shut = False

    def nvmlDeviceGetCount(self) -> int:
        return 1

    def nvmlDeviceGetHandleByIndex(self, index: int) -> str:
        return f"gpu{index}"

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, _handle: str) -> int:
        return 0x4 | 0x20  # software power cap, software thermal slowdown

    def nvmlDeviceGetClockInfo(self, _handle: str, _clock: int) -> int:
        return 1410

    def nvmlDeviceGetMaxClockInfo(self, _handle: str, _clock: int) -> int:
        return 1980

    def nvmlDeviceGetTemperature(self, _handle: str, _sensor: int) -> int:
        return 83

    def nvmlShutdown(self) -> None:
        self.shut = True


def test_the_gpu_reading_names_its_clocks_and_throttle_reasons(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from omniqual.checks.perf import gpu

    fake = FakeNvml()
    monkeypatch.setattr(gpu, "open_nvml", lambda: fake)
    assert gpu.read_gpu_clocks() == ({"index": 0, "sm_clock_mhz": 1410, "sm_clock_max_mhz": 1980,
                                      "throttle_reasons": ["sw_power_cap", "sw_thermal_slowdown"],
                                      "temperature_c": 83},)  # fmt: skip
    assert fake.shut
    monkeypatch.setattr(gpu, "open_nvml", lambda: None)
    assert gpu.read_gpu_clocks() is None
