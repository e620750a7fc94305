"""The tolerance of a candidate that combines several fast paths: each feature's rule admits the
deviation that feature makes, so the combination is held to the loosest bound any of them sets
per metric (exactness only where every one requires it). Pure over the tolerance models."""

from collections.abc import Callable, Sequence
from typing import TypeVar

from pydantic import BaseModel

from omniqual.compare.tolerance import ParityTolerance

_B = TypeVar("_B", bound=BaseModel)
_MAX_BOUNDS = ("max_abs_error", "max_temporal_difference", "max_log_spectral_distance_db")


def _loosest_of(blocks: Sequence[_B]) -> _B:
    """Per field: the lowest ``min_*``, the highest ``max_*``, ``require_exact`` only if all."""
    merged: dict[str, object] = {}
    for name in type(blocks[0]).model_fields:
        values = [getattr(b, name) for b in blocks]
        if name == "require_exact":
            merged[name] = all(values)
            continue
        set_values = [v for v in values if v is not None]
        if not set_values or isinstance(set_values[0], str):
            merged[name] = set_values[0] if set_values else None
            continue
        pick: Callable[..., object] = max if name in _MAX_BOUNDS else min
        merged[name] = pick(set_values)
    return type(blocks[0]).model_validate(merged)


def combined(named: Sequence[tuple[str, ParityTolerance]]) -> ParityTolerance:
    """One tolerance for every feature of the row: itself when there is one."""
    if len(named) == 1:
        return named[0][1]
    tolerances = [t for _, t in named]
    fields: dict[str, object] = {
        "rationale": " | ".join(f"{name}: {t.rationale}" for name, t in named)
    }
    for modality in ("image", "video", "audio"):
        blocks = [b for t in tolerances if (b := getattr(t, modality)) is not None]
        fields[modality] = _loosest_of(blocks) if blocks else None
    return ParityTolerance.model_validate(fields)
