"""Entry point of the ``vllm_omni.platform_plugins`` group for the CPU OmniPlatform.

vLLM-Omni calls ``cpu_platform_plugin()`` in every process while resolving its platform; an
activated out-of-tree plugin wins over built-in detection, so this one must never shadow a real
accelerator. It activates only when ``OMNIQUAL_CPU_PLATFORM=1`` is set AND torch sees no
accelerator; otherwise it returns None. torch is imported inside the function only (vLLM has
imported it already when it calls plugins), so importing this module stays light.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping

logger = logging.getLogger(__name__)

ENV_SWITCH = "OMNIQUAL_CPU_PLATFORM"
PLATFORM_QUALNAME = "omniqual.deploy.embedded.platform.CpuOmniPlatform"


def switch_enabled(environ: Mapping[str, str]) -> bool:
    return environ.get(ENV_SWITCH, "").strip() == "1"


def accelerator_present() -> bool:
    """True when torch reports any accelerator (CUDA/ROCm, XPU, MPS, NPU, ...)."""
    import torch

    accelerator = getattr(torch, "accelerator", None)
    if accelerator is not None and accelerator.is_available():
        return True
    if torch.cuda.is_available():
        return True
    npu = getattr(torch, "npu", None)
    return bool(npu is not None and npu.is_available())


ISA_PROBES_ABOVE_AVX2: tuple[str, ...] = (
    "_is_amx_tile_supported",
    "_is_amx_fp16_supported",
    "_is_avx512_bf16_supported",
    "_is_avx512_supported",
    "_is_avx512_vnni_supported",
)
"""``torch.cpu`` probes of instructions beyond AVX2 that vLLM's CPU build reads to pick kernels."""


def isa_capped_below_avx512(environ: Mapping[str, str]) -> bool:
    """True when oneDNN is capped to AVX2 or lower (``ONEDNN_MAX_CPU_ISA``), as the embedded
    recipes of an ``…-avx2`` hardware class are launched."""
    cap = environ.get("ONEDNN_MAX_CPU_ISA", "").strip().upper()
    return cap in {"SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX2_VNNI_2"}


def cap_isa_probes(environ: Mapping[str, str]) -> list[str]:
    """Make torch's CPU feature probes agree with the oneDNN ISA cap in force; return the probes
    capped.

    The probes read CPUID, not the cap: on an AMX host capped to AVX2, vLLM's CPU build still
    picks its AMX brgemm kernels, which oneDNN then refuses inside an OpenMP region, and the
    server aborts (``c10::Error``, exit -6) on its warm-up run. Capped, it takes the kernels an
    AVX2-only host takes, which is what the row's hardware class promises."""
    if not isa_capped_below_avx512(environ):
        return []
    import torch

    capped: list[str] = []
    for name in ISA_PROBES_ABOVE_AVX2:
        if hasattr(torch.cpu, name):
            setattr(torch.cpu, name, _unsupported)
            capped.append(name)
    return capped


def _unsupported() -> bool:
    return False


def cpu_platform_plugin() -> str | None:
    """Class path of the CPU OmniPlatform when asked for and safe, else None."""
    if not switch_enabled(os.environ):
        return None
    if accelerator_present():
        logger.warning("%s=1 ignored: an accelerator is present", ENV_SWITCH)
        return None
    capped = cap_isa_probes(os.environ)
    if capped:
        logger.info("ISA capped to %s: torch.cpu probes %s report False",
                    os.environ.get("ONEDNN_MAX_CPU_ISA"), ", ".join(capped))  # fmt: skip
    return PLATFORM_QUALNAME
