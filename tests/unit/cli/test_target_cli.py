"""`omniqual target` without processes: exit codes, messages, catalog and envfix wiring."""

import sys
import types
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Unpack

import pytest
import typer
from typer.testing import CliRunner

from omniqual.cli import target as target_cli
from omniqual.cli.target import target_app
from omniqual.deploy.launcher import LaunchError, LaunchOptions
from omniqual.deploy.state import TargetState, targets_dir, write_state
from omniqual.domain.recipe import LaunchRecipe

app = typer.Typer()
app.add_typer(target_app, name="target")
cli = CliRunner()

RECIPE = """\
id: sd3-tiny-step
description: SD3 with step execution
kind: embedded
pipeline: sd3-tiny
flags:
  step-execution: true
expect: rejects
expected_error: does not support that contract
"""


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OMNIQUAL_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def runners(tmp_path: Path) -> Path:
    root = tmp_path / "runners"
    root.mkdir()
    (root / "sd3-tiny-step.yaml").write_text(RECIPE)
    return root


@dataclass(frozen=True)
class Built:
    path: Path
    manifest_path: Path
    rebuilt: bool


@pytest.fixture
def catalog(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Path, bool]]:
    calls: list[tuple[str, Path, bool]] = []
    fake = types.ModuleType("omniqual.deploy.embedded.catalog")

    def build_checkpoint(name: str, cache_root: Path, *, force: bool = False) -> Built:
        calls.append((name, cache_root, force))
        return Built(cache_root / name, cache_root / name / "manifest.json", True)

    fake.PIPELINES = {"sd3-tiny": object(), "wan-t2v-tiny": object()}  # type: ignore[attr-defined]
    fake.build_checkpoint = build_checkpoint  # type: ignore[attr-defined]
    import omniqual.deploy.embedded as embedded

    monkeypatch.setitem(sys.modules, "omniqual.deploy.embedded.catalog", fake)
    monkeypatch.setattr(embedded, "catalog", fake, raising=False)
    return calls


def test_list_shows_recipes(runners: Path) -> None:
    result = cli.invoke(app, ["target", "list", "--runners", str(runners)])
    assert result.exit_code == 0
    assert "sd3-tiny-step" in result.stdout and "rejects" in result.stdout


def test_unknown_recipe_is_one_line_and_exit_2(runners: Path) -> None:
    result = cli.invoke(app, ["target", "up", "sd3-tiny-stpe", "--runners", str(runners)])
    assert result.exit_code == 2
    assert result.stderr.strip() == "no launch recipe 'sd3-tiny-stpe' (did you mean sd3-tiny-step?)"


def test_bad_recipe_file_exits_2_with_its_location(runners: Path) -> None:
    (runners / "bad.yaml").write_text(RECIPE.replace("sd3-tiny-step", "bad").replace(
        "kind: embedded", "kind: rocket"))  # fmt: skip
    result = cli.invoke(app, ["target", "list", "--runners", str(runners)])
    assert result.exit_code == 2
    assert f"{runners / 'bad.yaml'}:3: kind:" in result.stderr


def test_up_builds_the_checkpoint_and_reports_a_rejection_with_exit_3(
    runners: Path, home: Path, catalog: list[tuple[str, Path, bool]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    seen: list[LaunchOptions] = []

    def fake_launch(recipe: LaunchRecipe, **options: Unpack[LaunchOptions]) -> None:
        seen.append(options)
        raise LaunchError(
            "sd3-tiny-step: server exited with code 1 during startup after 9.0s",
            reason="exited", recipe_id=recipe.id, command=("vllm", "serve"), exit_code=1,
            log_tail=("Traceback (most recent call last):",
                      "ValueError: StableDiffusion3Pipeline does not support that contract."),
        )  # fmt: skip

    monkeypatch.setattr(target_cli, "launch", fake_launch)
    result = cli.invoke(app, ["target", "up", "sd3-tiny-step", "--runners", str(runners)])
    assert result.exit_code == 3
    assert catalog == [("sd3-tiny", home / "checkpoints", False)]
    assert seen[0]["model"] == str(home / "checkpoints" / "sd3-tiny") and seen[0]["persist"]
    assert "exited with code 1" in result.stderr
    assert "does not support that contract." in result.stderr
    assert "expects this rejection" in result.stderr


def test_up_port_in_use_exits_2(runners: Path, catalog: object, monkeypatch) -> None:
    def fake_launch(recipe: LaunchRecipe, **options: Unpack[LaunchOptions]) -> None:
        raise LaunchError("port 8000 on 127.0.0.1 is already in use", reason="port-in-use",
                          recipe_id=recipe.id)  # fmt: skip

    monkeypatch.setattr(target_cli, "launch", fake_launch)
    args = ["target", "up", "sd3-tiny-step", "--runners", str(runners), "--port", "8000"]
    result = cli.invoke(app, args)
    assert result.exit_code == 2 and "already in use" in result.stderr


def test_unknown_override_exits_2(runners: Path) -> None:
    args = ["target", "up", "sd3-tiny-step", "--runners", str(runners), "--set", "colour=red"]
    result = cli.invoke(app, args)
    assert result.exit_code == 2 and "unknown key" in result.stderr


def test_build_resolves_recipe_ids_and_defaults_to_all(runners: Path, catalog) -> None:
    result = cli.invoke(app, ["target", "build", "sd3-tiny-step", "--force",
                              "--runners", str(runners)])  # fmt: skip
    assert result.exit_code == 0
    assert [(name, force) for name, _, force in catalog] == [("sd3-tiny", True)]
    assert cli.invoke(app, ["target", "build", "--runners", str(runners)]).exit_code == 0
    assert [name for name, _, _ in catalog[1:]] == ["sd3-tiny", "wan-t2v-tiny"]
    bad = cli.invoke(app, ["target", "build", "flux-huge", "--runners", str(runners)])
    assert bad.exit_code == 2 and "unknown bundled pipeline 'flux-huge'" in bad.stderr


def test_status_and_down_with_nothing_running() -> None:
    assert "no targets running" in cli.invoke(app, ["target", "status"]).stdout
    result = cli.invoke(app, ["target", "down", "ghost"])
    assert result.exit_code == 2 and "no target named 'ghost'" in result.stderr


def test_down_removes_a_stale_record_without_signalling() -> None:
    write_state(TargetState(
        name="old", recipe_id="sd3-tiny", pid=2**22 + 4321, pgid=2**22 + 4321, create_time=1.0,
        host="127.0.0.1", port=1, url="http://127.0.0.1:1", log_path="/tmp/old.log",
        command=("vllm",), started_at=datetime(2025, 1, 1, tzinfo=UTC),
    ))  # fmt: skip
    assert "gone" in cli.invoke(app, ["target", "status"]).stdout
    result = cli.invoke(app, ["target", "down"])
    assert result.exit_code == 0 and "old: stale record removed" in result.stdout
    assert not list(targets_dir().glob("*.json"))


def test_fix_env_prints_each_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    from omniqual.deploy.embedded import envfix

    def fake_fixes() -> list[envfix.EnvFix]:
        return [envfix.EnvFix(name="torchvision-nms", status=envfix.EnvFixStatus.APPLIED,
                              detail="guarded fake nms")]  # fmt: skip

    monkeypatch.setattr(envfix, "apply_environment_fixes", fake_fixes)
    result = cli.invoke(app, ["target", "fix-env"])
    assert result.exit_code == 0
    assert "torchvision-nms" in result.stdout and "applied" in result.stdout
