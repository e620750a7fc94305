"""Cache hits read from a server log: Cache-DiT's summary (``cache_dit/summary.py``, logged after
each request when the server runs with ``--enable-cache-dit-summary``) writes
``Cache Steps: <count>, [<step>, ...]`` and ``Residual Diffs: <n>, {...}``. The slice of the log a
request appended is read after it, so each request gets its own count; the last summary in the
slice is the request's (the count is per cache context, refreshed per request).

Absence is never proof: a slice without a summary line is ``None`` (not read), not zero hits."""

import re
from dataclasses import dataclass
from pathlib import Path

_CACHED = re.compile(r"Cache Steps: (?P<count>\d+), \[(?P<steps>[^\]]*)\]")
_DIFFS = re.compile(r"Residual Diffs: \d+, (?P<diffs>\{[^}]*\})")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")


@dataclass(frozen=True, slots=True)
class Hits:
    cached: int
    steps: tuple[int, ...]
    """The step indices the cache served (its first one is where it engages)."""
    diffs: tuple[float, ...] = ()
    """The residual differences the cache measured, in step order (what its threshold meets)."""


def hits_in(text: str) -> Hits | None:
    found = list(_CACHED.finditer(text))
    if not found:
        return None
    last = found[-1]
    steps = tuple(int(s) for s in re.findall(r"\d+", last.group("steps")))
    diffs_found = list(_DIFFS.finditer(text))
    diffs: tuple[float, ...] = ()
    if diffs_found:
        pairs = re.findall(r"(-?\d+)\s*:\s*(" + _NUMBER.pattern + ")",
                           diffs_found[-1].group("diffs").replace("'", ""))  # fmt: skip
        diffs = tuple(float(v) for _, v in sorted(pairs, key=lambda p: int(p[0])))
    return Hits(int(last.group("count")), steps, diffs)


class LogTail:
    """Reads what a log file gained since the last read (None: no log to read)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.offset = self._size()

    def _size(self) -> int:
        try:
            return self.path.stat().st_size if self.path is not None else 0
        except OSError:
            return 0

    def read(self) -> str | None:
        if self.path is None:
            return None
        try:
            with self.path.open("rb") as handle:
                handle.seek(self.offset)
                data = handle.read()
        except OSError:
            return None
        self.offset += len(data)
        return data.decode("utf-8", errors="replace")
