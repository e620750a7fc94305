"""The strict-load gate: ``gate`` loads the checkpoint strictly and judges what was left over,
``mapping`` reads the checkpoint-to-module mapping file the gate checks against."""

from omniqual.checks.strict_load.gate import StrictLoadCheck, StrictLoadParams

__all__ = ["StrictLoadCheck", "StrictLoadParams"]
