"""Launcher pieces that need no process or socket: log tails, placeholders, startup outcomes."""

import sys
from pathlib import Path

import pytest

from omniqual.deploy.launcher import StartupOutcome, launch, placeholder_values
from omniqual.deploy.server_log import log_tail, search_log
from omniqual.domain.recipe import Expectation, LaunchRecipe


def recipe(**fields: object) -> LaunchRecipe:
    data: dict[str, object] = {"id": "r", "description": "d", "kind": "embedded",
                               "pipeline": "sd3-tiny"}  # fmt: skip
    data.update(fields)
    return LaunchRecipe.model_validate(data)


def test_log_tail_returns_the_last_lines(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(b"".join(f"line {i}\n".encode() for i in range(100)) + b"\xff bad utf8")
    tail = log_tail(log, 20)
    assert len(tail) == 20
    assert tail[0] == "line 81" and tail[-1] == "\ufffd bad utf8"
    assert log_tail(tmp_path / "missing.log") == ()


def test_log_tail_strips_terminal_colours(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("\x1b[0;36m(DiffusionWorker pid=1)\x1b[0;0m RuntimeError: boom\n")
    assert log_tail(log) == ("(DiffusionWorker pid=1) RuntimeError: boom",)
    assert search_log(log, r"^\(DiffusionWorker pid=1\) RuntimeError") is True
    assert search_log(log, "absent") is False
    assert search_log(log, None) is None
    assert search_log(tmp_path / "missing.log", "x") is False


def test_placeholders_include_the_interpreter_bin_dir(tmp_path: Path) -> None:
    values = placeholder_values(recipe(), "127.0.0.1", 9000, "/ckpt", tmp_path)
    assert values == {
        "host": "127.0.0.1", "port": "9000", "bindir": str(Path(sys.executable).parent),
        "model": "/ckpt", "recipe_dir": str(tmp_path),
    }  # fmt: skip
    command = LaunchRecipe.model_validate(
        {"id": "c", "description": "d", "kind": "command", "model": "m", "command": ["x"]}
    )
    assert placeholder_values(command, "h", 1, None, None)["model"] == "m"


def outcome(expected: Expectation, ready: bool, matched: bool | None) -> StartupOutcome:
    return StartupOutcome(
        recipe_id="r", expected=expected, became_ready=ready,
        reason="ready" if ready else "exited", exit_code=None if ready else 1, elapsed_s=1.0,
        log_path=None, log_tail=(), command=(), expected_error_matched=matched,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("expected", "ready", "matched", "as_expected"),
    [
        (Expectation.SERVES, True, None, True),
        (Expectation.SERVES, False, None, False),
        (Expectation.REJECTS, False, True, True),
        (Expectation.REJECTS, False, False, False),  # died, but for another reason
        (Expectation.REJECTS, True, False, False),
    ],
)
def test_outcome_as_expected(
    expected: Expectation, ready: bool, matched: bool | None, as_expected: bool
) -> None:
    assert outcome(expected, ready, matched).as_expected is as_expected


def test_url_recipes_are_not_launched() -> None:
    remote = LaunchRecipe.model_validate(
        {"id": "u", "description": "d", "kind": "url", "url": "http://127.0.0.1:1"}
    )
    with pytest.raises(ValueError, match="nothing to launch"):
        launch(remote)
