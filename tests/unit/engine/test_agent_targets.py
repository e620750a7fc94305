"""A campaign's agents: each one observes a target the run serves by URL, and none other."""

from pathlib import Path

import pytest

from omniqual.deploy.agent.client import AgentAccess
from omniqual.domain.recipe import LaunchRecipe, RecipeKind
from omniqual.engine.targets.agents import check_agent_targets
from omniqual.specs.recipes import LoadedRecipe

AGENT = AgentAccess("http://gpu-host:7100", "t0ken-t0ken-t0ken-t0ken")


def _recipe(recipe_id: str, kind: RecipeKind, **fields: object) -> LoadedRecipe:
    fields = {"id": recipe_id, "kind": kind, "description": "d", **fields}
    recipe = LaunchRecipe.model_validate(fields)
    return LoadedRecipe(recipe, Path(f"runners/{recipe_id}.yaml"), None)


RECIPES = [
    _recipe("by-url", RecipeKind.URL, url="http://gpu-host:8000"),
    _recipe("launched", RecipeKind.COMMAND, model="m", command=("vllm", "serve")),
]


def test_url_recipes_and_url_targets_take_an_agent() -> None:
    check_agent_targets({"by-url": AGENT}, RECIPES, None)
    check_agent_targets({"launched": AGENT}, RECIPES, {"launched": "http://other:8000"})


def test_a_launched_or_unknown_recipe_takes_none() -> None:
    with pytest.raises(ValueError, match=r"--agent launched=.*those are: by-url"):
        check_agent_targets({"launched": AGENT}, RECIPES, None)
    with pytest.raises(ValueError, match="--agent nope="):
        check_agent_targets({"nope": AGENT}, RECIPES, None)
