"""The journal's hash chain: its links, its head, and checking it line by line.

Each record's ``prev_sha256`` is the sha256 of the journal line before it, exact bytes with the
newline that ends it; the first record's is :data:`GENESIS` (64 zeros). Blank lines are not
records and are skipped. The appender links every record it writes (continuing from the last line
on disk, so a resumed run continues the chain), and :func:`check_chain` finds the first link that
does not match: a record edited in place breaks the link of the record after it; a deleted,
reordered or inserted line breaks a link at that place.

Records written before chaining carry no link ("unchained"): they read as always, and the chain
vouches for none of them. A journal may begin unchained and continue chained (an old run resumed),
never the reverse: a record without a link after a linked one is a break.

The chain is evidence against accidents and careless edits, not a signature: whoever rewrites
every link after an edit leaves a valid chain, and so does cutting records off the end, or an edit
of the last line (nothing links to it). The head (the sha256 of the journal's last line) is what
the journal's anchors record outside it (``anchor.json`` after every record, run.json and the
digest at the run's end: :mod:`omniqual.evidence.anchor`), so those two show as well.
"""

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

GENESIS = "0" * 64
"""The link of a journal's first record."""

_CHUNK = 1 << 16

ChainState = Literal["chained", "unchained", "partly chained", "broken", "empty"]


def line_sha256(line: bytes) -> str:
    """The link a record following ``line`` (a whole journal line, newline included) carries."""
    return hashlib.sha256(line).hexdigest()


def chain_head(path: Path, size: int | None = None) -> str:
    """The sha256 of the last complete, non-blank line in the first ``size`` bytes of the
    journal (all of it by default): the link the next record carries. GENESIS when none."""
    with path.open("rb") as handle:
        end = os.fstat(handle.fileno()).st_size if size is None else size
        stop = _last_newline(handle, end)
        while stop >= 0:
            start = _last_newline(handle, stop) + 1
            handle.seek(start)
            line = handle.read(stop + 1 - start)
            if line.strip():
                return line_sha256(line)
            stop = start - 1
    return GENESIS


def _last_newline(handle: BinaryIO, before: int) -> int:
    """The offset of the last newline before offset ``before``, or -1."""
    position = before
    while position > 0:
        step = min(_CHUNK, position)
        position -= step
        handle.seek(position)
        found = handle.read(step).rfind(b"\n")
        if found >= 0:
            return position + found
    return -1


class _Link(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)
    prev_sha256: str | None = None


_LINK: TypeAdapter[_Link] = TypeAdapter(_Link)


@dataclass(frozen=True, slots=True)
class ChainBreak:
    """The first record whose link does not match the line before it."""

    line: int
    previous_line: int | None
    """The line the link should name (None: the record is the journal's first)."""
    expected: str
    """sha256 of that line, or GENESIS."""
    found: str | None
    """The link the record carries (None: it carries none)."""

    def describe(self) -> str:
        if self.found is None:
            return (
                f"line {self.line} carries no link although the records before it are chained:"
                " a line was inserted here, or its link removed"
            )
        if self.previous_line is None:
            what = "the genesis link (it is the first record)"
            why = "the lines before it were deleted, or its link altered"
        else:
            what = f"the sha256 of line {self.previous_line}"
            why = (
                f"line {self.previous_line} was altered, or a line deleted, inserted or moved here"
            )
        found, expected = self.found[:16], self.expected[:16]
        return f"line {self.line} links to {found}…, expected {expected}…, {what}: {why}"


@dataclass(frozen=True, slots=True)
class ChainCheck:
    """What checking one journal's chain found."""

    records: int
    """Records checked (up to the first break)."""
    unchained: int
    """Of those, the records that carry no link (they come first)."""
    broken: ChainBreak | None

    @property
    def state(self) -> ChainState:
        if self.broken is not None:
            return "broken"
        if self.records == 0:
            return "empty"
        if self.unchained == self.records:
            return "unchained"
        return "partly chained" if self.unchained else "chained"


def check_chain(path: Path, size: int | None = None) -> ChainCheck:
    """Check the links of the records in the first ``size`` bytes of the journal (all of it by
    default; pass the reader's valid size to leave a torn tail to the reader). A line that is
    not a JSON object ends the check: the reader reports it."""
    expected, previous_line = GENESIS, None
    records = unchained = 0
    remaining = size
    with path.open("rb") as handle:
        for lineno, raw in enumerate(handle, 1):
            if remaining is not None:
                if remaining < len(raw):
                    break
                remaining -= len(raw)
            if not raw.endswith(b"\n"):
                break
            if not raw.strip():
                continue
            try:
                found = _LINK.validate_json(raw).prev_sha256
            except ValidationError:
                break
            chained = records > unchained
            if (found is None and chained) or (found is not None and found != expected):
                broken = ChainBreak(lineno, previous_line, expected, found)
                return ChainCheck(records, unchained, broken)
            records += 1
            unchained += found is None
            expected, previous_line = line_sha256(raw), lineno
    return ChainCheck(records, unchained, None)
