"""The speed/quality frontier of a cache sweep and the tier mapping. Pure: figures in, names out.

A point is judged only when it is active (the log showed cache hits), measured and compared; an
inactive point is never counted as a speedup. One point is faster than another only when its
latency range (the timed passes' min to max) lies wholly below the other's (the rule of
:mod:`omniqual.compare.frontier`), and better only when its worst SSIM is higher by more than
``resolution``. The lossless baseline is on the chart with SSIM 1.

Tier mapping: each tier (strictest first) gets the fastest frontier point whose worst PSNR and
SSIM meet its floors and which is faster than lossless beyond the spread; a tier no point meets
maps to ``lossless``, with the reason.
"""

import math
from dataclasses import dataclass

from omniqual.checks.cache_tiers.params import LOSSLESS, TierFloor


@dataclass(frozen=True, slots=True)
class TierPoint:
    name: str
    latency_s: float
    latency_range: tuple[float, float]
    psnr_db: float | None
    """Worst over the seeds; ``inf`` where identical to lossless."""
    ssim: float | None


def _faster(a: TierPoint, b: TierPoint) -> bool:
    return a.latency_range[1] < b.latency_range[0]


def _better(a: TierPoint, b: TierPoint, resolution: float) -> bool:
    return (a.ssim or 0.0) - (b.ssim or 0.0) > resolution


def frontier(points: list[TierPoint], resolution: float) -> tuple[str, ...]:
    """The points no other is faster and no worse than, or better and no slower than."""

    def beats(a: TierPoint, b: TierPoint) -> bool:
        a_wins = (_faster(a, b), _better(a, b, resolution))
        b_wins = (_faster(b, a), _better(b, a, resolution))
        return any(a_wins) and not any(b_wins)

    kept = [p for p in points if not any(beats(o, p) for o in points if o is not p)]
    return tuple(p.name for p in sorted(kept, key=lambda p: (p.latency_s, p.name)))


def _meets(point: TierPoint, tier: TierFloor) -> bool:
    if tier.min_psnr_db is not None and (point.psnr_db is None or point.psnr_db < tier.min_psnr_db):
        return False
    return tier.min_ssim is None or (point.ssim is not None and point.ssim >= tier.min_ssim)


def mapping(
    points: list[TierPoint], front: tuple[str, ...], tiers: tuple[TierFloor, ...]
) -> dict[str, dict[str, str]]:
    """Tier name -> {"point": name, "why": sentence}; ``lossless`` maps to itself."""
    by_name = {p.name: p for p in points}
    lossless = by_name[LOSSLESS]
    chosen: dict[str, dict[str, str]] = {LOSSLESS: {"point": LOSSLESS, "why": "no cache"}}
    for tier in tiers:
        fits = [by_name[n] for n in front if n != LOSSLESS and _meets(by_name[n], tier)
                and _faster(by_name[n], lossless)]  # fmt: skip
        if not fits:
            why = "no active point meets the floors and is faster than lossless beyond the spread"
            chosen[tier.name] = {"point": LOSSLESS, "why": why}
            continue
        best = min(fits, key=lambda p: (p.latency_s, p.name))
        psnr = "identical" if best.psnr_db is not None and math.isinf(best.psnr_db) else (
            f"PSNR {best.psnr_db:.1f} dB" if best.psnr_db is not None else "no PSNR")  # fmt: skip
        chosen[tier.name] = {"point": best.name, "why": (
            f"fastest frontier point meeting the floors: {best.latency_s:.3f} s against "
            f"lossless {lossless.latency_s:.3f} s, {psnr}, SSIM {best.ssim:.3f}")}  # fmt: skip
    return chosen
