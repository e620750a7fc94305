"""Resource judging on given points: GPU memory samples are judged (the server tree's own usage,
device-wide kept beside it), and every absent signal is a reason for `invalid`."""

from __future__ import annotations

from pathlib import Path

from omniqual.checks.soak.params import Reliability
from omniqual.checks.soak.resources import absent_signals, gpu_growth, judge_resources
from omniqual.checks.soak.watch import MIB, ResourcePoint


def point(t: float, *, gpu_tree: int | None = 2000 * MIB, gpu_device: int | None = 9000 * MIB,
          nvml: bool = True, memory: int | None = 900 * MIB) -> ResourcePoint:  # fmt: skip
    return ResourcePoint(t, "process-tree", memory, memory, 40, 0, gpu_tree, gpu_device, nvml)


def test_gpu_growth_of_the_server_tree_fails_and_device_wide_is_recorded() -> None:
    found = gpu_growth(point(0), point(9, gpu_tree=2300 * MIB, gpu_device=12000 * MIB), 64, "x")
    assert found.failures == [
        "x: the server's GPU memory grew by 300.0 MiB (2000 -> 2300 MiB), bound 64 MiB"
    ]
    measured = {m.name: m.value for m in found.measurements}
    assert measured == {"gpu_device_memory_growth_mib": 3000.0, "gpu_memory_growth_mib": 300.0}


def test_device_wide_growth_of_another_tenant_is_not_the_servers() -> None:
    found = gpu_growth(point(0), point(9, gpu_device=20000 * MIB), 64, "x")
    assert not found.failures and not found.invalid


def test_gpu_memory_nvml_could_not_attribute_is_invalid() -> None:
    found = gpu_growth(point(0, gpu_tree=None), point(9, gpu_tree=None), 64, "x")
    assert found.invalid and "did not attribute GPU memory" in found.invalid[0]


def test_gpu_slope_over_the_phases_is_judged() -> None:
    points = [point(t * 10.0, gpu_tree=(2000 + 50 * t) * MIB) for t in range(12)]
    found = judge_resources(points, points[0], points[-1], Reliability(), "soak",
                            watch_dirs=(Path("/tmp"),), hardware="gpu-h200")  # fmt: skip
    assert any("GPU memory slope of the server's processes +300.00 MiB/min" in f
               for f in found.failures), found.failures  # fmt: skip


def test_every_absent_signal_is_named() -> None:
    bare = ResourcePoint(0.0, "metrics", None, None, None, None)
    reasons = absent_signals(bare, bare, (), "gpu-a100", "after")
    assert [r.split(":")[1].strip() for r in reasons] == [
        "no memory figure (source metrics)",
        "no open-FD figure (source metrics)",
        "no watch directory (the server's temp dir is unknown, e.g. a URL target; set watch_dirs, "
        "or --watch-dir on its agent)",
        "NVML is unavailable on a GPU row (hardware gpu-a100)",
    ]
    assert absent_signals(point(0), point(1), (Path("/tmp"),), "cpu-x86_64-2core-avx2", "x") == []
    no_devices = point(1, gpu_tree=None, gpu_device=None)
    [reason] = absent_signals(point(0), no_devices, (Path("/tmp"),), "gpu-h200", "x")
    assert reason == "x: NVML reported no GPU memory on a GPU row (hardware gpu-h200)"
