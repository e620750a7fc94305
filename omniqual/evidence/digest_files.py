"""When a run's digest is written, trusted, rebuilt and checked.

Written once the run-finished record is durable; trusted by compile while the journal still has
the recorded size and tail (a journal only grows, or loses a torn tail on resume: either changes
its size) and its last line still hashes to the recorded chain head (which links to every line
before it); otherwise rebuilt from the journal and cached again, as a stale digest is.
``evidence verify`` hashes the whole journal and compares every result. A digest is never
needed: failing to write one only costs a rebuild later.
"""

import logging
import zipfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from omniqual.domain.result import GateResult
from omniqual.evidence.chain import chain_head
from omniqual.evidence.digest import ResultDigest, iter_digests
from omniqual.evidence.durable import write_atomic
from omniqual.evidence.journal import JOURNAL_NAME
from omniqual.evidence.run_digest import (
    DIGEST_NAME,
    FORMAT,
    DigestBuilder,
    RunDigest,
    stamp_journal,
    tail_sha256,
)

logger = logging.getLogger(__name__)

_UNREADABLE = (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile)


def build_digest(
    results: Iterable[GateResult | ResultDigest],
    journal: Path,
    hosts: Sequence[str | None] | None = None,
) -> RunDigest:
    """``hosts``: per full result, the host its session ran on (digests carry their own)."""
    builder = DigestBuilder()
    for i, result in enumerate(results):
        builder.add(result, hosts[i] if hosts is not None else None)
    return builder.build(stamp_journal(journal))


def write_digest(run_dir: Path, results: Sequence[GateResult], hosts: Sequence[str | None]) -> None:
    """Digest ``results`` (every result the journal holds, in order, with the host each one's
    session ran on) and store it."""
    digest = build_digest(results, run_dir / JOURNAL_NAME, hosts)
    write_atomic(run_dir / DIGEST_NAME, [digest.save()])


def load_current(run_dir: Path) -> RunDigest | None:
    """The stored digest if it describes the journal as it is now, else None."""
    try:
        digest = RunDigest.load(run_dir / DIGEST_NAME)
    except FileNotFoundError:
        return None
    except _UNREADABLE as exc:
        logger.info("%s: unreadable digest (%s); rebuilding", run_dir / DIGEST_NAME, exc)
        return None
    journal = run_dir / JOURNAL_NAME
    size = journal.stat().st_size
    recorded = digest.meta.journal
    if digest.meta.format != FORMAT or recorded.size != size:
        return None
    if recorded.tail_sha256 != tail_sha256(journal, size):
        return None
    head = chain_head(journal, size)
    if recorded.head_sha256 != head:
        logger.warning(
            "%s: records chain head %.12s…, but the journal's last line hashes to %.12s…; "
            "not trusted, rebuilt from the journal", run_dir / DIGEST_NAME,
            recorded.head_sha256, head,
        )  # fmt: skip
        return None
    return digest


def rebuild_digest(run_dir: Path) -> RunDigest:
    """Re-read the journal into a digest and cache it (when the journal held still meanwhile)."""
    journal = run_dir / JOURNAL_NAME
    before = journal.stat().st_size
    digest = build_digest(iter_digests(run_dir), journal)
    if digest.meta.journal.size == before:
        try:
            write_atomic(run_dir / DIGEST_NAME, [digest.save()])
        except OSError as exc:  # read-only evidence: compile still works, just slower
            logger.info("%s: digest not cached (%s)", run_dir, exc)
    return digest


def current_digest(run_dir: Path) -> RunDigest:
    return load_current(run_dir) or rebuild_digest(run_dir)


def check_digest(
    run_dir: Path, results: Sequence[GateResult], hosts: Sequence[str | None]
) -> tuple[list[str], list[str]]:
    """(problems, notes): a digest that disagrees with the journal ``results`` were read from
    (each with its session's host) is a problem; a missing, older-format or stale one (compile
    rebuilds it) is a note."""
    path = run_dir / DIGEST_NAME
    if not path.exists():
        return [], [f"{path}: no digest (compile rebuilds it from the journal)"]
    try:
        stored = RunDigest.load(path)
    except _UNREADABLE as exc:
        return [f"{path}: unreadable digest ({type(exc).__name__})"], []
    if stored.meta.format != FORMAT:
        return [], [f"{path}: digest format {stored.meta.format}, not {FORMAT} (compile "
                    "rebuilds it)"]  # fmt: skip
    expected = build_digest(results, run_dir / JOURNAL_NAME, hosts)
    recorded, actual = stored.meta.journal, expected.meta.journal
    if recorded.size != actual.size:
        return [], [f"{path}: stale: built from a journal of {recorded.size} bytes, it now has "
                    f"{actual.size} (compile rebuilds it)"]  # fmt: skip
    if recorded.head_sha256 != actual.head_sha256:
        return [
            f"{path}: records chain head {str(recorded.head_sha256)[:12]}…, but the journal's "
            f"last line hashes to {str(actual.head_sha256)[:12]}…: one of the two was altered"
        ], []
    if recorded != actual:
        return [
            f"{path}: records the journal as sha256 {recorded.sha256[:12]}… with "
            f"{recorded.lines} lines, but the journal is {actual.sha256[:12]}… with "
            f"{actual.lines} lines at the same size: one of the two was altered"
        ], []
    difference = _first_difference(stored, expected)
    return ([f"{path}: disagrees with the journal: {difference}"] if difference else []), []


def _first_difference(stored: RunDigest, expected: RunDigest) -> str | None:
    if len(stored) != len(expected):
        return f"{len(stored)} results, the journal holds {len(expected)}"
    pairs = zip(stored.results(), expected.results(), strict=True)
    for i, (ours, theirs) in enumerate(pairs):
        if ours != theirs:
            fields = [name for name in type(theirs).model_fields
                      if getattr(ours, name) != getattr(theirs, name)]  # fmt: skip
            return (f"result {i + 1} ({theirs.result_id}) differs in "
                    f"{', '.join(fields) or 'its fields'}")  # fmt: skip
    return None
