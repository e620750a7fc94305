"""Reading a launched server's captured log: the tail for error messages, regex search for gates,
the head for what its start-up resolved.

vLLM prefixes worker lines with terminal colour codes; both readers strip them so messages and
``expected_error`` patterns see plain text. The log file itself stays byte-for-byte as written.
"""

import os
import re
from pathlib import Path

TAIL_LINES = 20
SEARCH_BYTES = 4 * 1024 * 1024
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


def _read_end(path: Path, size: int) -> str:
    with path.open("rb") as handle:
        handle.seek(0, os.SEEK_END)
        handle.seek(max(0, handle.tell() - size))
        return _ANSI.sub("", handle.read().decode("utf-8", errors="replace"))


def log_head(path: Path, size: int = SEARCH_BYTES) -> str | None:
    """The first ``size`` bytes as plain text (a start-up says what it resolved there); None
    when the log cannot be read."""
    try:
        with path.open("rb") as handle:
            return _ANSI.sub("", handle.read(size).decode("utf-8", errors="replace"))
    except OSError:
        return None


def log_tail(path: Path, lines: int = TAIL_LINES) -> tuple[str, ...]:
    """The last ``lines`` lines (empty when the log cannot be read)."""
    try:
        text = _read_end(path, 64 * 1024)
    except OSError:
        return ()
    return tuple(text.splitlines()[-lines:])


def search_log(path: Path | None, pattern: str | None) -> bool | None:
    """Whether ``pattern`` occurs in the last 4 MiB of the log; None when there is no pattern."""
    if pattern is None or path is None:
        return None
    try:
        text = _read_end(path, SEARCH_BYTES)
    except OSError:
        return False
    return re.search(pattern, text, re.MULTILINE) is not None
