"""A launched target that a gate crashed is relaunched for the next gate (no sockets)."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from omniqual.checks.base import TargetInfo
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.provenance import Provenance
from omniqual.engine.run import campaign
from omniqual.engine.run.events import EngineEvent, TargetLost, TargetStarting
from omniqual.engine.targets.targets import PreparedModel, ServedTarget
from omniqual.specs.campaign import load_campaign
from tests.fakes import checks
from tests.fakes.projects import make_project


def _launched_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = make_project(tmp_path, monkeypatch)
    (root / "runners" / "live.yaml").write_text(
        "id: live\ndescription: a launched deployment\nkind: command\nmodel: m\n"
        "command: [serve, '{model}', --port, '{port}']\n"
        "row: {model: m, quantization: none, hardware: cpu}\n"
    )
    return root


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every launch of a recipe, in order; health fails once, right after the first gate."""
    started: list[str] = []
    health = iter([False])

    @asynccontextmanager
    async def served(loaded: Any, prepared: Any, writer: Any, url: Any,
                     role: str = "", pid: Any = None,
                     agent: Any = None) -> AsyncIterator[ServedTarget]:  # fmt: skip
        started.append(loaded.recipe.id)
        info = TargetInfo(url=f"http://127.0.0.1:9/{len(started)}", recipe=loaded.recipe)
        yield ServedTarget(info, Provenance(model="m"))

    async def answers_health(_url: str | None) -> bool:
        return next(health, True)

    def prepare_model(recipe: Any, base: Provenance, _directory: Any) -> PreparedModel:
        return PreparedModel(model="m", checkpoint_dir=None, provenance=base)

    monkeypatch.setattr(campaign, "served", served)
    monkeypatch.setattr(campaign, "answers_health", answers_health)
    monkeypatch.setattr(campaign, "prepare_model", prepare_model)
    return started


def test_a_target_lost_after_a_gate_is_relaunched_for_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, launches: list[str]
) -> None:
    root = _launched_project(tmp_path, monkeypatch)
    events: list[EngineEvent] = []
    outcome = asyncio.run(
        campaign.run_campaign(load_campaign(root / "c.yaml"), command=["t"], observe=events.append)
    )
    # Three gates on one recipe: the target died after the first, so it was launched twice,
    # and every gate still ran against a live server instead of erroring.
    assert launches == ["live", "live"]
    assert len(checks.CALLS) == 3
    assert all(r.outcome is not GateOutcome.ERRORED for r in outcome.results)
    lost = [e for e in events if isinstance(e, TargetLost)]
    assert len(lost) == 1 and lost[0].recipe == "live"
    assert sum(isinstance(e, TargetStarting) for e in events) == 2
