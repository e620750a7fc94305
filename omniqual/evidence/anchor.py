"""The journal's anchor: its length and its last line, recorded outside it, so that what the hash
chain cannot see shows too.

The chain (:mod:`omniqual.evidence.chain`) links each line to the one before it: it vouches for
every line that has a successor and for nothing after the last, so records cut off the end leave
a valid chain, and the last line can be edited unseen. The writer therefore rewrites
``anchor.json`` (a :class:`~omniqual.domain.run.JournalAnchor`) atomically after every record it
makes durable; ``run.json`` keeps the anchor of the run's end, and the digest's journal stamp
anchors the same way. An anchor is written only once its record is on stable storage, so it never
runs ahead of the journal; a writer killed between the two leaves it a line behind (a note).

A journal only grows: resume cuts only a torn tail, which no anchor covers, then appends. So for
every anchor the journal must be at least as long, and its line ending at the anchored length must
hash to the anchored head (the chain vouches for the lines before it). Otherwise records were
removed or the anchored line altered: verify reports it as damage, compile and resume refuse the
run. A journal whose sessions all predate anchoring has no ``anchor.json``: it reads as ever, and
verify notes that nothing but a finished run's digest and run.json vouches for its end.
"""

import json
import os
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from omniqual.domain.run import ANCHOR_SCHEMA_VERSION, JournalAnchor
from omniqual.evidence.chain import chain_head
from omniqual.evidence.durable import temp_file_in, write_all
from omniqual.evidence.errors import StoreError

ANCHOR_NAME = "anchor.json"
_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class AnchorClaim:
    """What one file (anchor.json, run.json, the digest) says of the journal's end."""

    source: Path
    size: int
    lines: int
    head_sha256: str | None
    """None only in digests of format 1, which anchor the length alone."""


def claim_of(source: Path, anchor: JournalAnchor) -> AnchorClaim:
    return AnchorClaim(source, anchor.size, anchor.lines, anchor.head_sha256)


def count_lines(path: Path, size: int) -> int:
    """Newlines in the first ``size`` bytes of ``path``."""
    lines = 0
    with path.open("rb") as handle:
        while size > 0 and (chunk := handle.read(min(_CHUNK, size))):
            lines += chunk.count(b"\n")
            size -= len(chunk)
    return lines


def write_anchor(run_dir: Path, anchor: JournalAnchor) -> None:
    """Replace ``anchor.json`` atomically (its content fsynced before the rename).

    The directory is not fsynced: that would double the cost of every record, and a rename a
    crash loses leaves the previous anchor, behind the journal (a note), never ahead of it.
    """
    text = json.dumps(anchor.model_dump(mode="json"), sort_keys=True, indent=2) + "\n"
    with temp_file_in(run_dir) as (fd, temp):
        write_all(fd, text.encode())
    try:
        os.replace(temp, run_dir / ANCHOR_NAME)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def read_anchor(run_dir: Path) -> JournalAnchor | None:
    """``anchor.json``, or None when the run has none; StoreError when it cannot be read."""
    path = run_dir / ANCHOR_NAME
    try:
        anchor = JournalAnchor.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValidationError, ValueError) as exc:
        raise StoreError(
            f"{path}: unreadable journal anchor ({type(exc).__name__}): the journal's end cannot "
            "be vouched for"
        ) from None
    if anchor.schema_version > ANCHOR_SCHEMA_VERSION:
        raise StoreError(
            f"{path}: anchor schema_version {anchor.schema_version}, but this omniqual "
            f"understands up to {ANCHOR_SCHEMA_VERSION}; upgrade omniqual to check it"
        )
    return anchor


def contradiction(journal: Path, journal_size: int, claim: AnchorClaim) -> str | None:
    """Why the journal (its first ``journal_size`` bytes) cannot be the one ``claim`` anchored,
    or None when it is that journal, possibly grown since."""
    if journal_size < claim.size:
        return (
            f"{journal} has {journal_size} bytes, shorter than the {claim.size} bytes "
            f"({claim.lines} lines) {claim.source} anchors: records were removed from it "
            "(a journal only grows)"
        )
    if claim.head_sha256 is None:
        return None
    head = chain_head(journal, claim.size)
    if head == claim.head_sha256:
        return None
    return (
        f"{journal}:{claim.lines}: the line ending at byte {claim.size} hashes to {head[:12]}…, "
        f"but {claim.source} anchored {claim.head_sha256[:12]}…: it was altered, or lines before "
        "it were removed or inserted"
    )


def check_anchor(run_dir: Path, journal: Path, journal_size: int) -> None:
    """Raise StoreError when ``anchor.json`` is unreadable or the journal contradicts it."""
    anchor = read_anchor(run_dir)
    if anchor is None:
        return
    problem = contradiction(journal, journal_size, claim_of(run_dir / ANCHOR_NAME, anchor))
    if problem is not None:
        raise StoreError(problem)


def anchor_findings(
    run_dir: Path, journal: Path, valid_size: int, *, required: bool
) -> tuple[list[str], list[str], bool]:
    """(problems, notes, anchored) for ``anchor.json`` against the journal's first
    ``valid_size`` bytes (its torn tail left out). ``required``: a session of the journal was
    written by an anchoring writer, so a missing anchor is damage, not age."""
    path = run_dir / ANCHOR_NAME
    try:
        anchor = read_anchor(run_dir)
    except StoreError as exc:
        return [str(exc)], [], False
    if anchor is None:
        if required:
            return [f"{path}: missing, although the journal was written by an anchoring "
                    "omniqual: nothing vouches for its end"], [], False  # fmt: skip
        return [], [f"{path}: none, the journal predates anchoring: records cut off its end or "
                    "an edit of its last line cannot be seen"], False  # fmt: skip
    problem = contradiction(journal, valid_size, claim_of(path, anchor))
    if problem is not None:
        return [problem], [], True
    counted = count_lines(journal, anchor.size)
    if counted != anchor.lines:
        return [f"{journal}: {counted} lines in its first {anchor.size} bytes, but {path} "
                f"anchored {anchor.lines}: lines were joined or split"], [], True  # fmt: skip
    after = count_lines(journal, valid_size) - counted
    if not after:
        return [], [], True
    lines = f"{after} line{'s' if after > 1 else ''}"
    return [], [f"{journal}: {lines} after the anchor (the writer stopped between making its "
                "last record durable and anchoring it): an edit of the last line cannot be "
                "seen"], True  # fmt: skip
