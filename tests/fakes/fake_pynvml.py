"""A stand-in for the ``pynvml`` module (nvidia-ml-py): one device with given memory figures
and a given running compute-process list, so NVML paths run without a GPU."""

from __future__ import annotations

from types import ModuleType, SimpleNamespace


def fake_pynvml(
    *, used: int, total: int, procs: list[tuple[int, int | None]] | None
) -> ModuleType:
    """``procs``: (pid, usedGpuMemory) pairs, usage None where NVML withholds it; None for a
    driver that cannot list processes (the call raises)."""
    module = ModuleType("pynvml")
    handle = object()

    def compute_processes(h: object) -> list[SimpleNamespace]:
        assert h is handle
        if procs is None:
            raise RuntimeError("NVML_ERROR_NOT_SUPPORTED")
        return [SimpleNamespace(pid=pid, usedGpuMemory=mem) for pid, mem in procs]

    module.nvmlInit = lambda: None  # type: ignore[attr-defined]
    module.nvmlDeviceGetCount = lambda: 1  # type: ignore[attr-defined]
    module.nvmlDeviceGetHandleByIndex = lambda index: handle  # type: ignore[attr-defined]
    module.nvmlDeviceGetMemoryInfo = (  # type: ignore[attr-defined]
        lambda h: SimpleNamespace(used=used, total=total, free=total - used)
    )
    module.nvmlDeviceGetComputeRunningProcesses = compute_processes  # type: ignore[attr-defined]
    return module
