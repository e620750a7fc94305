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


def cpu_platform_plugin() -> str | None:
    """Class path of the CPU OmniPlatform when asked for and safe, else None."""
    if not switch_enabled(os.environ):
        return None
    if accelerator_present():
        logger.warning("%s=1 ignored: an accelerator is present", ENV_SWITCH)
        return None
    return PLATFORM_QUALNAME
