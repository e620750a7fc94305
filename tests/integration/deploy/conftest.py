"""Launcher integration fixtures: recipes that run fake_server.py next to this file."""

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from omniqual.deploy.launcher import LaunchOptions
from omniqual.domain.recipe import LaunchRecipe

FAKE_SERVER = Path(__file__).with_name("fake_server.py")

RecipeFactory = Callable[..., LaunchRecipe]


def fake_command(mode: str, *extra: str) -> list[str]:
    return [sys.executable, str(FAKE_SERVER), "--host", "{host}", "--port", "{port}",
            "--mode", mode, *extra]  # fmt: skip


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("OMNIQUAL_HOME", str(home))
    return home


@pytest.fixture
def fake_recipe() -> RecipeFactory:
    def make(mode: str, *extra: str, **fields: object) -> LaunchRecipe:
        data: dict[str, object] = {
            "id": f"fake-{mode}",
            "description": f"fake server in mode {mode}",
            "kind": "command",
            "command": fake_command(mode, *extra),
            "readiness": {"timeout_s": 20, "interval_s": 0.05},
            "stop": {"grace_s": 5},
        }
        data.update(fields)
        return LaunchRecipe.model_validate(data)

    return make


@pytest.fixture
def options(tmp_path: Path) -> LaunchOptions:
    return {"state_dir": tmp_path / "targets", "log_path": tmp_path / "server.log"}
