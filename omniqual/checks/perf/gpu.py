"""What the perf gate records of the GPU on a GPU row, in place of the CPU reference workload.

The one-thread CPU reference workload (:mod:`omniqual.loadgen.host_speed`) measures the CPU the
harness shares with the server; on a GPU row the server's time is the GPU's, so that reading
would judge the wrong device and it is never taken there: nothing about the host vetoes or widens
a GPU row's comparison. What the gate records instead, before and after each launch's measured
repetitions, is each visible GPU's SM clock against its maximum, its clock throttle reasons and
its temperature, read through NVML (``nvidia-ml-py``, the ``nvidia`` extra the observer uses).
They are evidence for whoever reads a surprising result (a thermally throttled device), and they
judge nothing: which reading of them would make a run invalid has not been measured. Without
``nvidia-ml-py`` or a working driver nothing is recorded, and the result says so.

A row is a GPU row when its hardware class is not a ``cpu-*`` one, or when the environment
fingerprint lists a GPU (a server there may run on it whatever the row says).
"""

import logging
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import JsonValue

from omniqual.deploy.observer import open_nvml

logger = logging.getLogger(__name__)

GpuClocks = tuple[dict[str, JsonValue], ...]
GpuReading = Callable[[], GpuClocks | None]
"""Each visible GPU's clocks and throttle reasons now; None where NVML cannot be read."""

THROTTLE_REASONS = {
    0x1: "gpu_idle", 0x2: "applications_clocks_setting", 0x4: "sw_power_cap",
    0x8: "hw_slowdown", 0x10: "sync_boost", 0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown", 0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}  # fmt: skip
"""NVML's ``nvmlClocksThrottleReason*`` bits (``nvmlClocksEventReason*`` in newer drivers)."""

NOT_USED = "CPU reference workload not used: the server runs on a GPU"
NOT_RECORDED = ("GPU clocks not recorded: nvidia-ml-py is not installed or NVML could not be "
                "read (install the `nvidia` extra on GPU hosts)")  # fmt: skip


def gpu_row(hardware: str | None, environment: Mapping[str, Any]) -> bool:
    """Whether the row's server runs on a GPU: a hardware class other than ``cpu-*``, or a GPU
    in the fingerprint."""
    named_gpu = hardware is not None and not hardware.startswith("cpu-")
    return named_gpu or bool(environment.get("gpus"))


def read_gpu_clocks() -> GpuClocks | None:
    nvml = open_nvml()
    if nvml is None:
        return None
    nv: Any = nvml
    try:
        devices: list[dict[str, JsonValue]] = []
        for index in range(nv.nvmlDeviceGetCount()):
            handle = nv.nvmlDeviceGetHandleByIndex(index)
            # Newer drivers name the throttle reasons clock "event" reasons.
            reasons = (getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None)
                       or nv.nvmlDeviceGetCurrentClocksThrottleReasons)  # fmt: skip
            bits = int(reasons(handle))
            devices.append({
                "index": index,
                "sm_clock_mhz": int(nv.nvmlDeviceGetClockInfo(handle, nv.NVML_CLOCK_SM)),
                "sm_clock_max_mhz": int(nv.nvmlDeviceGetMaxClockInfo(handle, nv.NVML_CLOCK_SM)),
                "throttle_reasons": [name for bit, name in THROTTLE_REASONS.items() if bits & bit],
                "temperature_c": int(nv.nvmlDeviceGetTemperature(handle,
                                                                 nv.NVML_TEMPERATURE_GPU)),
            })  # fmt: skip
        return tuple(devices)
    except Exception:  # an old driver or a device that does not report a figure
        logger.debug("NVML clock query failed", exc_info=True)
        return None
    finally:
        try:
            nv.nvmlShutdown()
        except Exception:
            logger.debug("NVML shutdown failed", exc_info=True)


class GpuReadings:
    """The GPU readings of one run on a GPU row, by launch."""

    def __init__(self, read: GpuReading, hardware: str | None) -> None:
        self.read_now, self.hardware = read, hardware
        self.readings: list[dict[str, JsonValue]] = []
        self.unread = False
        self.attempted = False

    def read(self, launch: int, when: str) -> None:
        """One reading; taken only with the server on this host (NVML sees this host's GPUs)."""
        self.attempted = True
        devices = self.read_now()
        if devices is None:
            self.unread = True
            return
        self.readings.append({"launch": launch, "when": when, "devices": list(devices)})

    def as_json(self) -> dict[str, JsonValue]:
        note = f"{NOT_USED} (hardware {self.hardware or 'unnamed'}, or a GPU in the fingerprint)"
        if not self.attempted:
            note += "; GPU clocks not recorded: the server is not on this host"
        elif self.unread or not self.readings:
            note += f"; {NOT_RECORDED}"
        else:
            note += ("; each GPU's clocks and throttle reasons are recorded before and after "
                     "each launch's repetitions (informational: they judge nothing)")
        return {"note": note, "readings": list(self.readings)}
