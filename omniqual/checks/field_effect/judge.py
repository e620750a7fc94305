"""What a compared pair means against the server's own reproducibility.

The probe, sent twice with the same seed, is the baseline: its two answers' distance is the
spread (none when they are identical). Below ``reproducible_db`` apart, or of another count or
shape, the server does not reproduce a request, and nothing about a field can be told from its
own variation: the gate is invalid for that reason. Otherwise a pair lies beyond the spread when
its outputs differ in structure, differ at all where the baseline was identical, or are further
apart than the baseline by more than ``margin_db``.

Judgement call: a reproducible server may still show a little same-seed noise (non-deterministic
GPU kernels); a difference inside that noise proves no effect, so an effect must stand
``margin_db`` clear of it, and an equal default may sit anywhere inside it. Real effects of
steering fields are tens of dB below the baseline (other images), so the margin decides nothing
but noise."""

import math
from dataclasses import dataclass

from omniqual.checks.field_effect.answers import Pair


@dataclass(frozen=True, slots=True)
class Spread:
    floor_db: float
    """The lowest PSNR/SNR between the baseline's two answers; inf when they are identical."""

    def describe(self) -> str:
        if math.isinf(self.floor_db):
            return "none: the same-seed baseline reproduces exactly"
        return f"{self.floor_db:.1f} dB between two same-seed answers"


def baseline_spread(pair: Pair, reproducible_db: float) -> Spread | str:
    """The spread of a baseline pair, or why it is not one (a reason, no prefix)."""
    if pair.problem is not None:
        return f"the baseline request failed ({pair.problem})"
    if pair.identical:
        return Spread(math.inf)
    distance = pair.distance_db
    if pair.structural is None and distance is not None and distance >= reproducible_db:
        return Spread(distance)
    return (
        f"the same request with the same seed, sent twice, gave {pair.describe()} (at least "
        f"{reproducible_db:g} dB apart needed): a field's effect cannot be told from the "
        "server's own variation"
    )


def beyond(pair: Pair, spread: Spread, margin_db: float) -> bool:
    """Whether the pair's outputs differ by more than the server's own spread."""
    if pair.structural is not None:
        return True
    if pair.identical:
        return False
    assert pair.distance_db is not None  # a compared, non-identical pair has a distance
    if math.isinf(spread.floor_db):
        return True
    return pair.distance_db < spread.floor_db - margin_db


def widened(spread: Spread, repeat: Pair, reproducible_db: float) -> Spread | str:
    """The spread widened by a second baseline (the default request sent twice)."""
    again = baseline_spread(repeat, reproducible_db)
    if isinstance(again, str):
        return again
    return Spread(min(spread.floor_db, again.floor_db))
