"""The agent's bearer token: made and kept in a 0600 file, read back, checked in constant time.

The token itself is never logged or printed: only the path of the file that holds it. Like
ssh with a private key, a token file that anyone but its owner may read or change is refused:
whoever reads it can arm faults in the server.
"""

import errno
import hmac
import os
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path

from omniqual.domain.agent import TOKEN_ENV

MIN_TOKEN_CHARS = 16
OWNER_ONLY = 0o600
_GROUP_OR_OTHERS = 0o077
"""Any permission bit of the group or others, as ssh checks a private key: a token file others
may write is as bad as one they may read (they could put their own token in it)."""


def new_token() -> str:
    return secrets.token_urlsafe(32)


def write_token_file(path: Path, token: str) -> None:
    """Create ``path`` holding ``token``, readable by its owner only (0600).

    The file must not exist yet: ``O_CREAT | O_EXCL | O_NOFOLLOW`` never follows a symlink
    planted at ``path`` (dangling or not) and never truncates a file someone else made there.
    ValueError (a usage error) says which it found."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, OWNER_ONLY)
    except OSError as exc:
        if exc.errno not in (errno.EEXIST, errno.ELOOP):
            raise
        what = "a symlink" if path.is_symlink() else "a file"
        raise ValueError(
            f"{path}: refusing to write the agent token there: {what} already exists at that "
            "path (a token file is only ever created, never followed or overwritten; remove it "
            "or name another --token-file)"
        ) from None
    try:
        os.fchmod(fd, OWNER_ONLY)  # the umask may have narrowed it; never widen beyond 0600
        os.write(fd, (token + "\n").encode())
    finally:
        os.close(fd)


def read_token_file(path: Path) -> str:
    """The token in ``path`` (surrounding whitespace dropped). ValueError when the file is open
    to its group or others (the message names the file and its mode) or the token is short."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        # The mode of what was opened, not of the path checked before: no swap in between.
        mode = stat.S_IMODE(os.fstat(fd).st_mode)
        if mode & _GROUP_OR_OTHERS:
            raise ValueError(
                f"{path}: permissions {mode:04o} are too open: an agent token file must be "
                f"readable by its owner only (chmod 600 {path})"
            )
        with os.fdopen(fd, encoding="utf-8", closefd=False) as handle:
            token = handle.read().strip()
    finally:
        os.close(fd)
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
