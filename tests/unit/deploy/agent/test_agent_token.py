"""The agent's bearer token: its file is the owner's alone, and only the exact token passes."""

import stat
from pathlib import Path

import pytest

from omniqual.deploy.agent.token import (
    agent_token,
    bearer_matches,
    new_token,
    read_token_file,
    write_token_file,
)
from omniqual.domain.agent import TOKEN_ENV


def test_a_written_token_file_is_0600_and_reads_back(tmp_path: Path) -> None:
    token = new_token()
    path = tmp_path / "sub" / "agent.token"
    write_token_file(path, token)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_token_file(path) == token
    assert new_token() != token


def test_a_short_token_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t"
    path.write_text("short\n")
    with pytest.raises(ValueError, match="at least 16"):
        read_token_file(path)


def test_only_the_exact_bearer_token_matches() -> None:
    token = "s3cret-s3cret-s3cret"
    assert bearer_matches(f"Bearer {token}", token)
    assert bearer_matches(f"bearer {token}", token)
    assert not bearer_matches(None, token)
    assert not bearer_matches("", token)
    assert not bearer_matches(f"Basic {token}", token)
    assert not bearer_matches(f"Bearer {token}x", token)
    assert not bearer_matches(f"Bearer {token[:-1]}", token)
    assert not bearer_matches("Bearer", token)


def test_the_harness_token_comes_from_the_file_else_the_environment(tmp_path: Path) -> None:
    path = tmp_path / "t"
    write_token_file(path, "from-the-file-0123456789")
    env = {TOKEN_ENV: "from-the-environment-0123"}
    assert agent_token(path, env) == "from-the-file-0123456789"
    assert agent_token(None, env) == "from-the-environment-0123"
    with pytest.raises(ValueError, match=TOKEN_ENV):
        agent_token(None, {})
    with pytest.raises(ValueError, match="at least 16"):
        agent_token(None, {TOKEN_ENV: "tiny"})
