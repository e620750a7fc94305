"""`omniqual target up/status/down` end to end against the fake server."""

import sys
from pathlib import Path

import psutil
import pytest
import typer
import yaml
from typer.testing import CliRunner

from omniqual.cli.target import target_app
from omniqual.deploy.state import list_states

pytestmark = pytest.mark.integration

FAKE_SERVER = Path(__file__).with_name("fake_server.py")

app = typer.Typer()
app.add_typer(target_app, name="target")


def write_recipe(root: Path, rid: str, mode: str, **extra: object) -> None:
    doc = {
        "id": rid,
        "description": f"fake {mode}",
        "kind": "command",
        "command": [sys.executable, str(FAKE_SERVER), "--host", "{host}", "--port", "{port}",
                    "--mode", mode],
        "readiness": {"timeout_s": 20, "interval_s": 0.05},
        **extra,
    }  # fmt: skip
    (root / f"{rid}.yaml").write_text(yaml.safe_dump(doc))


@pytest.fixture
def runners(tmp_path: Path) -> Path:
    root = tmp_path / "runners"
    root.mkdir()
    write_recipe(root, "fake-ok", "healthy")
    write_recipe(root, "fake-dies", "die", expect="rejects", expected_error="bogus-flag")
    return root


def test_up_status_down(runners: Path) -> None:
    cli = CliRunner()
    up = cli.invoke(app, ["target", "up", "fake-ok", "--runners", str(runners)])
    assert up.exit_code == 0, up.output
    assert "ready at http://127.0.0.1:" in up.stdout
    [state] = list_states()
    assert state.alive()
    try:
        status = cli.invoke(app, ["target", "status"])
        assert status.exit_code == 0
        assert "fake-ok" in status.stdout and "running" in status.stdout
        down = cli.invoke(app, ["target", "down", "fake-ok"])
        assert down.exit_code == 0
        assert "fake-ok: stopped" in down.stdout
    finally:
        if state.alive():
            psutil.Process(state.pid).kill()
    assert not state.alive()
    assert list_states() == []
    assert "no targets running" in cli.invoke(app, ["target", "status"]).stdout


def test_up_of_a_dying_server_exits_3_with_log_lines(runners: Path) -> None:
    result = CliRunner().invoke(app, ["target", "up", "fake-dies", "--runners", str(runners)])
    assert result.exit_code == 3
    assert "exited with code 7" in result.stderr
    assert "ValueError: --bogus-flag is not supported" in result.stderr
    assert "expects this rejection" in result.stderr
    assert list_states() == []


def test_up_with_a_bad_override_exits_2(runners: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["target", "up", "fake-ok", "--runners", str(runners), "--set", "readiness.timeout_s=-1"],
    )
    assert result.exit_code == 2
    assert "readiness.timeout_s" in result.stderr
    assert list_states() == []
