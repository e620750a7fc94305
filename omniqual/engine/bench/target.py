"""The deployment a bench run measures: a URL checked for health, or a recipe launched for the
run and stopped however it ends (the same launcher the gates use)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from omniqual.client import ClientError, OmniClient
from omniqual.deploy.launcher import launch, stop
from omniqual.deploy.state import omniqual_home
from omniqual.domain.recipe import RecipeKind
from omniqual.engine.targets.targets import check_reachable, served_model_id
from omniqual.specs.project import find_project
from omniqual.specs.recipes import load_recipes


@dataclass(frozen=True, slots=True)
class BenchTarget:
    url: str
    label: str  # what the result names: the URL or the recipe id (never a local path)
    model: str


async def _served_model(url: str) -> str:
    try:
        async with OmniClient(url) as client:
            listing = await client.models()
    except ClientError:  # a server without /v1/models is still benchmarkable
        return "unknown"
    return listing.data[0].id if listing.data else "unknown"


@asynccontextmanager
async def bench_target(target: str) -> AsyncIterator[BenchTarget]:
    if target.startswith(("http://", "https://")):
        await check_reachable(target)
        yield BenchTarget(target, target, await _served_model(target))
        return
    loaded = load_recipes(find_project().runners)[target]
    recipe = loaded.recipe
    if recipe.kind is RecipeKind.URL:
        assert recipe.url is not None  # a url recipe always has one (LaunchRecipe checks)
        await check_reachable(recipe.url)
        yield BenchTarget(recipe.url, recipe.id, await _served_model(recipe.url))
        return
    model = recipe.model
    if recipe.kind is RecipeKind.EMBEDDED and recipe.pipeline is not None:
        from omniqual.deploy.embedded.catalog import build_checkpoint

        built = await asyncio.to_thread(
            build_checkpoint, recipe.pipeline, omniqual_home() / "checkpoints"
        )
        model = str(built.path)
    launched = await asyncio.to_thread(
        launch, recipe, model=model, recipe_dir=loaded.directory,
        name=f"bench-{recipe.id}-{os.getpid()}",
    )  # fmt: skip
    try:
        served = served_model_id(recipe, model)
        # A built checkpoint is a directory of this machine: the result names its folder only.
        label = Path(served).name if model is not None and served == model else served
        yield BenchTarget(launched.url, recipe.id, label)
    finally:
        await asyncio.to_thread(stop, launched)
