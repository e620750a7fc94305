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
    path.chmod(0o600)  # owner-only, so the length is what is refused
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


@pytest.mark.parametrize(
    "mode", [0o640, 0o604, 0o644, 0o660, 0o602, 0o610], ids=lambda m: f"{m:04o}"
)
def test_a_token_file_others_can_reach_is_refused_naming_the_file_and_mode(
    tmp_path: Path, mode: int
) -> None:
    path = tmp_path / "agent.token"
    write_token_file(path, new_token())
    path.chmod(mode)
    with pytest.raises(ValueError) as refused:
        read_token_file(path)
    said = str(refused.value)
    assert str(path) in said
    assert f"{mode:04o}" in said
    assert "too open" in said
    # The harness side reads its --agent-token-file through the same check.
    with pytest.raises(ValueError, match="too open"):
        agent_token(path, {})


def test_an_owner_only_token_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "agent.token"
    write_token_file(path, "owner-only-0123456789")
    path.chmod(0o400)
    assert read_token_file(path) == "owner-only-0123456789"


def test_writing_the_token_never_follows_a_dangling_symlink(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere" / "planted"
    target.parent.mkdir()
    link = tmp_path / "agent.token"
    link.symlink_to(target)
    with pytest.raises(ValueError) as refused:
        write_token_file(link, new_token())
    assert str(link) in str(refused.value)
    assert not target.exists()  # nothing was created where the link points
    assert link.is_symlink()


def test_writing_the_token_never_follows_a_symlink_to_a_file(tmp_path: Path) -> None:
    target = tmp_path / "victim"
    target.write_text("keep me\n")
    target.chmod(0o644)
    link = tmp_path / "agent.token"
    link.symlink_to(target)
    with pytest.raises(ValueError, match="symlink"):
        write_token_file(link, new_token())
    assert target.read_text() == "keep me\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644


def test_writing_the_token_never_replaces_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "agent.token"
    path.write_text("an older token-0123456789\n")
    with pytest.raises(ValueError, match="already exists"):
        write_token_file(path, new_token())
    assert path.read_text() == "an older token-0123456789\n"
