"""The agents a run reads remote process trees through (``--agent``), checked before any gate.

Each agent is asked who it is before anything runs: an unreachable agent or a refused token is a
usage error then, instead of a column of errored abort and soak gates later. What it answers
names the target's host in the run's fingerprint (``agent:<host>``).
"""

import asyncio
from collections.abc import Mapping, Sequence

from omniqual.deploy.agent.client import AgentAccess, AgentClient, AgentError
from omniqual.domain.provenance import AGENT_HOST_PREFIX
from omniqual.domain.recipe import RecipeKind
from omniqual.specs.recipes import LoadedRecipe


def _host_of(access: AgentAccess) -> str:
    with AgentClient(access) as client:
        identity = client.identity()
    return f"{AGENT_HOST_PREFIX}{identity.host}"


async def agent_hosts(agents: Mapping[str, AgentAccess]) -> dict[str, str]:
    """Per key of ``agents`` (a target), ``agent:<host>``; ValueError when one cannot be asked."""
    found: dict[str, str] = {}
    for key, access in agents.items():
        try:
            found[key] = await asyncio.to_thread(_host_of, access)
        except AgentError as exc:
            hint = " (check --agent-token-file / OMNIQUAL_AGENT_TOKEN)" if exc.status == 401 else ""
            raise ValueError(f"--agent for {key}: {exc}{hint}") from exc
    return found


def check_agent_targets(agents: Mapping[str, AgentAccess], recipes: Sequence[LoadedRecipe],
                        urls: Mapping[str, str] | None) -> None:  # fmt: skip
    """Every agent is for a recipe the run serves by URL (a launched one is observed on this
    host already); ValueError otherwise."""
    by_url = {r.recipe.id for r in recipes
              if r.recipe.kind is RecipeKind.URL or r.recipe.id in (urls or {})}  # fmt: skip
    for recipe_id in agents:
        if recipe_id not in by_url:
            served = ", ".join(sorted(by_url)) or "none"
            raise ValueError(f"--agent {recipe_id}=...: not a target this run uses by URL "
                             f"(those are: {served})")  # fmt: skip
