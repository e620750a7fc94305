"""The launches of a cache-tiers run, derived from the row's recipe: the lossless baseline drops
the cache flags; a point sets the backend, its ``--cache-config`` JSON and the summary flag.
Nothing else changes; each gets the params' readiness deadline."""

import json

from omniqual.checks.cache_tiers.params import LOSSLESS, CachePoint, CacheTiersParams
from omniqual.domain.recipe import Expectation, FlagValue, LaunchRecipe


def _derived(base: LaunchRecipe, name: str, flags: dict[str, FlagValue],
             deadline_s: float) -> LaunchRecipe:  # fmt: skip
    readiness = base.readiness.model_copy(
        update={"timeout_s": min(base.readiness.timeout_s, deadline_s)}
    )
    return base.model_copy(update={"id": f"{base.id}--{name}", "flags": flags,
                                   "readiness": readiness, "expect": Expectation.SERVES,
                                   "expected_error": None})  # fmt: skip


def _plain(base: LaunchRecipe, params: CacheTiersParams) -> dict[str, FlagValue]:
    return {k: v for k, v in base.flags.items() if k not in params.cache_flags}


def lossless_recipe(base: LaunchRecipe, params: CacheTiersParams) -> LaunchRecipe:
    return _derived(base, LOSSLESS, _plain(base, params), params.startup_deadline_s)


def point_recipe(base: LaunchRecipe, params: CacheTiersParams, point: CachePoint) -> LaunchRecipe:
    flags = _plain(base, params)
    flags["cache-backend"] = params.backend
    if point.cache_config:
        flags["cache-config"] = json.dumps(point.cache_config, sort_keys=True)
    if params.summary_flag:
        flags[params.summary_flag] = True
    return _derived(base, point.name, flags, params.startup_deadline_s)
