"""The ``--agent`` options: a token is required, and a campaign's agent names its target."""

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from omniqual.cli.agent import agent_access, campaign_agents
from omniqual.deploy.agent.token import write_token_file
from omniqual.domain.agent import TOKEN_ENV

if TYPE_CHECKING:
    from typer.testing import Result

TOKEN = "t0ken-t0ken-t0ken-t0ken"


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "agent.token"
    write_token_file(path, TOKEN)
    return path


def test_gate_run_agent_takes_the_file_or_the_environment(
    token_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    assert agent_access(None, None) is None
    access = agent_access("http://h:1", token_file)
    assert access is not None and access.token == TOKEN
    with pytest.raises(ValueError, match=TOKEN_ENV):
        agent_access("http://h:1", None)
    monkeypatch.setenv(TOKEN_ENV, "env-token-0123456789")
    access = agent_access("http://h:1", None)
    assert access is not None and access.token == "env-token-0123456789"
    with pytest.raises(ValueError, match="goes with --agent"):
        agent_access(None, token_file)


def test_a_campaign_agent_names_its_target(token_file: Path) -> None:
    found = campaign_agents(["sd3=http://a:1", "flux=http://b:2"], token_file, ["flux", "sd3"])
    assert {k: v.url for k, v in found.items()} == {"sd3": "http://a:1", "flux": "http://b:2"}
    assert campaign_agents(["http://a:1"], token_file, ["sd3"])["sd3"].url == "http://a:1"
    with pytest.raises(ValueError, match="RECIPE=URL"):
        campaign_agents(["http://a:1"], token_file, ["flux", "sd3"])
    assert campaign_agents([], None, ["sd3"]) == {}


def test_a_port_in_use_is_one_line_and_exit_2(
    token_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from typer.testing import CliRunner

    from omniqual.cli.main import app

    def in_use(*_args: object) -> None:
        raise OSError(98, "Address already in use")

    monkeypatch.setattr("omniqual.deploy.agent.server.AgentServer", in_use)
    result = CliRunner().invoke(app, ["agent", "--pid", str(os.getpid()), "--port", "7100",
                                      "--token-file", str(token_file)])  # fmt: skip
    assert result.exit_code == 2
    assert "cannot listen on 127.0.0.1:7100: Address already in use" in result.stderr
    assert "Traceback" not in result.output


def _agent(*args: str) -> "Result":
    import os

    from typer.testing import CliRunner

    from omniqual.cli.main import app

    return CliRunner().invoke(app, ["agent", "--pid", str(os.getpid()), *args])


def _refuse_to_listen(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The server is never started: listening stops at once with 'in use', recording the host."""
    asked: list[str] = []

    def in_use(_service: object, host: str, _port: int) -> None:
        asked.append(host)
        raise OSError(98, "Address already in use")

    monkeypatch.setattr("omniqual.deploy.agent.server.AgentServer", in_use)
    return asked


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "gpu-host.example", ""])
def test_a_bind_beyond_loopback_needs_allow_remote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host: str
) -> None:
    asked = _refuse_to_listen(monkeypatch)
    token_file = tmp_path / "agent.token"
    result = _agent("--host", host, "--port", "7100", "--token-file", str(token_file))
    assert result.exit_code == 2
    assert "--allow-remote" in result.stderr
    assert "not a loopback address" in result.stderr
    assert asked == []  # refused before listening
    assert not token_file.exists()  # and before a token was made
    assert "Traceback" not in result.output


def test_allow_remote_lets_the_agent_listen_beyond_loopback(
    token_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = _refuse_to_listen(monkeypatch)
    result = _agent("--host", "0.0.0.0", "--allow-remote", "--port", "7100",
                    "--token-file", str(token_file))  # fmt: skip
    assert asked == ["0.0.0.0"]
    assert "cannot listen on 0.0.0.0:7100" in result.stderr


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_loopback_binds_need_no_flag(
    token_file: Path, monkeypatch: pytest.MonkeyPatch, host: str
) -> None:
    asked = _refuse_to_listen(monkeypatch)
    _agent("--host", host, "--port", "7100", "--token-file", str(token_file))
    assert asked == [host]


def test_the_agent_refuses_a_token_file_others_can_read(
    token_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = _refuse_to_listen(monkeypatch)
    token_file.chmod(0o644)
    result = _agent("--port", "7100", "--token-file", str(token_file))
    assert result.exit_code == 2
    said = " ".join(result.stderr.split())  # the console may wrap a long path
    assert str(token_file) in said and "0644" in said and "too open" in said
    assert asked == []
