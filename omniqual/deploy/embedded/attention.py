"""SDPA diffusion attention backend for the CPU OmniPlatform.

vLLM-Omni's ``AttentionImpl.forward`` dispatches only to rocm/cuda/npu/xpu/musa and raises
``NotImplementedError`` otherwise; this backend keeps vLLM-Omni's own SDPA implementation (mask
reshaping, GQA handling) and only replaces the dispatch so it runs on the CPU platform.
Loaded by vLLM-Omni through the class path the platform returns; imports torch and vllm_omni.
"""

from __future__ import annotations

from typing import Any

import torch
from vllm_omni.diffusion.attention.backends.sdpa import SDPABackend, SDPAImpl


class CpuSdpaImpl(SDPAImpl):  # type: ignore[misc, unused-ignore]
    """SDPA on CPU tensors with the same [batch, seq, heads, dim] layout as the CUDA path."""

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        attn_metadata: Any = None,
    ) -> torch.Tensor:
        output: torch.Tensor = self._forward_impl(
            query, key, value, attn_metadata, mask_mode="broadcast_k"
        )
        return output


class CpuSdpaBackend(SDPABackend):  # type: ignore[misc, unused-ignore]
    """The only diffusion attention backend the CPU platform offers."""

    supported_platforms = ("oot",)

    @staticmethod
    def get_name() -> str:
        return "CPU_SDPA"

    @staticmethod
    def get_impl_cls() -> type[CpuSdpaImpl]:
        return CpuSdpaImpl
