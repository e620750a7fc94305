"""The ``lora`` check kind: per-request LoRA adapters act, stay in their request, and bad ones
are refused."""

from omniqual.checks.lora.check import LoraCheck
from omniqual.checks.lora.params import LoraParams

__all__ = ["LoraCheck", "LoraParams"]
