"""The cache-tiers gate's result as table rows: one per launch (lossless first) with its
settings, latency, quality against lossless, cache hits and where the cache engaged, and one per
tier with the point it maps to. A pure view of ``effective["cache_tiers"]``; it judges nothing."""

from collections.abc import Mapping

from omniqual.domain.result import GateResult

POINT_HEADER = ("point", "settings", "status", "latency (s)", "PSNR (dB)", "SSIM",
                "cached steps", "first cached step", "frontier")  # fmt: skip
TIER_HEADER = ("tier", "point", "why")


def _num(value: object, fmt: str) -> str:
    return format(value, fmt) if isinstance(value, int | float) else "-"


def _block(result: GateResult) -> Mapping[str, object] | None:
    block = result.effective.get("cache_tiers")
    return block if isinstance(block, Mapping) else None


def cache_point_rows(result: GateResult) -> list[tuple[str, ...]]:
    block = _block(result)
    points = block.get("points") if block is not None else None
    if block is None or not isinstance(points, list):
        return []
    front = block.get("frontier")
    on_front = set(front) if isinstance(front, list) else set()
    rows: list[tuple[str, ...]] = []
    for p in points:
        if not isinstance(p, Mapping):
            continue
        settings = p.get("settings")
        shown = (", ".join(f"{k}={v}" for k, v in settings.items())
                 if isinstance(settings, Mapping) and settings else "-")  # fmt: skip
        psnr = "identical" if p.get("identical") else _num(p.get("psnr_db"), ".1f")
        rows.append((str(p.get("name")), shown, str(p.get("status", "?")),
                     _num(p.get("latency_s"), ".3f"), psnr, _num(p.get("ssim"), ".3f"),
                     _num(p.get("cached_steps"), "d"), _num(p.get("first_cached_step"), "d"),
                     "yes" if p.get("name") in on_front else "no"))  # fmt: skip
    return rows


def cache_tier_rows(result: GateResult) -> list[tuple[str, ...]]:
    block = _block(result)
    tiers = block.get("tiers") if block is not None else None
    if not isinstance(tiers, Mapping):
        return []
    return [(str(name), str(t.get("point", "?")), str(t.get("why", "")))
            for name, t in tiers.items() if isinstance(t, Mapping)]  # fmt: skip


def cache_engages(result: GateResult) -> str:
    """Where the cache started to serve steps, as the gate recorded it ("" when not recorded)."""
    block = _block(result)
    return str(block.get("engages", "")) if block is not None else ""
