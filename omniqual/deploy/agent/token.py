"""The agent's bearer token: made and kept in a 0600 file, read back, checked in constant time.

The token itself is never logged or printed: only the path of the file that holds it.
"""

import hmac
import os
import secrets
from collections.abc import Mapping
from pathlib import Path

from omniqual.domain.agent import TOKEN_ENV

MIN_TOKEN_CHARS = 16


def new_token() -> str:
    return secrets.token_urlsafe(32)


def write_token_file(path: Path, token: str) -> None:
    """Write ``token`` to ``path``, readable by its owner only (created 0600, never widened)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, (token + "\n").encode())
    finally:
        os.close(fd)


def read_token_file(path: Path) -> str:
    """The token in ``path`` (surrounding whitespace dropped); ValueError when it is too short."""
    token = path.read_text(encoding="utf-8").strip()
    if len(token) < MIN_TOKEN_CHARS:
        raise ValueError(f"{path}: an agent token has at least {MIN_TOKEN_CHARS} characters")
    return token


def agent_token(token_file: Path | None, environ: Mapping[str, str]) -> str:
    """The harness side's token: ``token_file`` if given, else the environment's
    ``OMNIQUAL_AGENT_TOKEN``; ValueError (a usage error) when neither holds one."""
    if token_file is not None:
        return read_token_file(token_file)
    token = environ.get(TOKEN_ENV, "").strip()
    if not token:
        raise ValueError(f"--agent needs its token: --agent-token-file F or {TOKEN_ENV}")
    if len(token) < MIN_TOKEN_CHARS:
        raise ValueError(f"{TOKEN_ENV}: an agent token has at least {MIN_TOKEN_CHARS} characters")
    return token


def bearer_matches(header: str | None, token: str) -> bool:
    """Whether an ``Authorization`` header carries exactly ``Bearer <token>``."""
    if header is None:
        return False
    scheme, _, given = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode(), token.encode())
