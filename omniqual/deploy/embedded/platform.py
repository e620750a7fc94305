"""CPU OmniPlatform for serving vLLM-Omni diffusion pipelines on a machine without accelerators.

vLLM-Omni ships no CPU platform; without one it falls back to ``UnspecifiedOmniPlatform`` and the
diffusion worker fails at ``set_device``. This class combines vLLM-Omni's ``OmniPlatform``
interface with vLLM's ``CpuPlatform`` (gloo, CPU device) and fills in what the diffusion worker
calls. Diffusion only: the autoregressive and generation worker hooks keep raising.

Memory figures are truthful: "free"/"total" device memory is the host's RAM (on CPU the tensors
live there), and the peak/allocated figures are this process's resident set, never an invented
device number. Loaded only by vLLM-Omni through the class path ``plugin`` returns.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import psutil
import torch
from vllm.platforms.cpu import CpuPlatform
from vllm_omni.platforms.interface import OmniPlatform, OmniPlatformEnum

logger = logging.getLogger(__name__)

ATTENTION_BACKEND_PATH = "omniqual.deploy.embedded.attention.CpuSdpaBackend"
_SDPA_NAMES = frozenset({"TORCH_SDPA", "SDPA", "CPU_SDPA"})
_PROC_STATUS = Path("/proc/self/status")
_PROC_CLEAR_REFS = Path("/proc/self/clear_refs")
# Opt-in for vLLM-Omni's diffusion torch.compile (inductor's C++ backend on the host CPU): a
# launch recipe sets it, so a compile row is its own server and every other row stays eager.
TORCH_COMPILE_ENV = "OMNIQUAL_CPU_TORCH_COMPILE"


def process_resident_bytes() -> int:
    """Current resident set size of this process (host RAM, not device memory)."""
    return int(psutil.Process().memory_info().rss)


def process_peak_resident_bytes() -> int:
    """Peak resident set size since the last reset (Linux ``VmHWM``), else the current RSS."""
    try:
        for line in _PROC_STATUS.read_text(encoding="ascii").splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return process_resident_bytes()


def reset_process_peak_resident() -> None:
    """Reset ``VmHWM`` to the current RSS (writing 5 to clear_refs); harmless where unsupported."""
    try:
        _PROC_CLEAR_REFS.write_text("5", encoding="ascii")
    except OSError:
        logger.debug("cannot reset the process peak RSS; peak figures span the process life")


class CpuOmniPlatform(OmniPlatform, CpuPlatform):  # type: ignore[misc, unused-ignore]
    """Out-of-tree OmniPlatform running diffusion on the host CPU."""

    _omni_enum = OmniPlatformEnum.OOT

    @classmethod
    def get_diffusion_attn_backend_cls(
        cls,
        selected_backend: str | None,
        head_size: int,
        allow_trtllm_default: bool = False,
    ) -> str:
        del head_size, allow_trtllm_default
        if selected_backend is not None and selected_backend.upper() not in _SDPA_NAMES:
            raise ValueError(
                f"The {selected_backend.upper()} diffusion attention backend is not available on "
                "the CPU platform; only TORCH_SDPA is."
            )
        return ATTENTION_BACKEND_PATH

    @classmethod
    def supports_torch_inductor(cls) -> bool:
        # Off unless the launch asks for it: without it vLLM-Omni runs the pipeline eagerly
        # whatever --enforce-eager says, which is what every row but a compile row measures.
        return os.environ.get(TORCH_COMPILE_ENV) == "1"

    @classmethod
    def supports_diffusion_dense_flash_attention(cls) -> bool:
        return False

    @classmethod
    def has_flash_attn_package(cls) -> bool:
        return False

    @classmethod
    def get_torch_device(cls, local_rank: int | None = None) -> torch.device:
        del local_rank
        return torch.device("cpu")

    @classmethod
    def set_device(cls, device: torch.device) -> None:
        # There is one host "device"; vLLM's torch.cpu.set_device is a no-op too.
        del device

    @classmethod
    def get_device_count(cls) -> int:
        return 1

    @classmethod
    def get_device_version(cls) -> str | None:
        return None

    @classmethod
    def synchronize(cls) -> None:
        # CPU kernels complete before returning.
        return None

    @classmethod
    def empty_cache(cls) -> None:
        return None

    @classmethod
    def get_free_memory(cls, device: torch.device | None = None) -> int:
        del device
        return int(psutil.virtual_memory().available)

    @classmethod
    def get_device_memory(cls, device: torch.device | None = None) -> tuple[int, int]:
        del device
        memory = psutil.virtual_memory()
        return int(memory.available), int(memory.total)

    @classmethod
    def get_device_total_memory(cls, device_id: int = 0) -> int:
        del device_id
        return int(psutil.virtual_memory().total)

    @classmethod
    def memory_reserved(cls, device: torch.device | int | None = None) -> int:
        del device
        return process_resident_bytes()

    @classmethod
    def reset_peak_memory_stats(cls, device: torch.device | int | None = None) -> None:
        del device
        reset_process_peak_resident()

    @classmethod
    def max_memory_allocated(cls, device: torch.device | int | None = None) -> int:
        """Process peak resident set (host RAM): the closest truthful figure on CPU."""
        del device
        return process_peak_resident_bytes()

    @classmethod
    def max_memory_reserved(cls, device: torch.device | int | None = None) -> int:
        """Process peak resident set (host RAM): the closest truthful figure on CPU."""
        del device
        return process_peak_resident_bytes()

    @classmethod
    def is_pin_memory_available(cls) -> bool:
        return False
