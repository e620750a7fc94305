"""Turning comparison metrics into evidence Measurements: only finite numbers become one."""

from __future__ import annotations

import math
from collections.abc import Iterable

from omniqual.domain.evidence import Measurement


def finite_measurements(
    metrics: Iterable[tuple[str, float | None, str]], samples: int | None = None
) -> tuple[Measurement, ...]:
    """One Measurement per (name, value, unit) whose value is a finite number.

    None (an absent metric, whose reason the comparison carries) and ±inf/NaN are left out:
    a JSON journal cannot carry infinity, and a made-up stand-in would be a fake number.
    """
    return tuple(
        Measurement(name=name, value=value, unit=unit, samples=samples)
        for name, value, unit in metrics
        if value is not None and math.isfinite(value)
    )
