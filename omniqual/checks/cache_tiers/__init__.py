"""The cache-tiers gate: a cache configuration sweep held to the lossless baseline. ``check``
launches the points and decides, ``work`` measures one launch (outputs, fixed-work latency,
cache hits, the alternation), ``hits`` reads cache hits from the server log, ``tiers`` builds
the frontier and the tier mapping, ``plot`` draws the frontier, ``params`` is the spec's block."""

from omniqual.checks.cache_tiers.check import CacheTiersCheck
from omniqual.checks.cache_tiers.params import CacheTiersParams

__all__ = ["CacheTiersCheck", "CacheTiersParams"]
