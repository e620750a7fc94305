"""The ``field_effect`` check kind: model-specific fields act, served defaults are official."""

from omniqual.checks.field_effect.check import FieldEffectCheck, FieldEffectParams

__all__ = ["FieldEffectCheck", "FieldEffectParams"]
