"""When a run's digest is written, trusted, rebuilt and checked.

Written once the run-finished record is durable; trusted by compile only while the whole journal
still hashes to the recorded sha256 (at the recorded size, with the recorded chain head): an edit
anywhere, even one keeping the size, the tail and the last line, is seen. Hashing the journal
costs a fraction of re-reading it, and nothing cheaper vouches for its middle (the chain does
only if every link is checked). Otherwise the digest is rebuilt from the journal and cached
again, as a stale one is; a journal with a torn tail is not cached (resume cuts the tail, and a
stamp that covered it would read as a journal cut short).

The stamp is also an anchor of the journal's end (see :mod:`omniqual.evidence.anchor`): a journal
shorter than it, or whose line ending at its recorded size no longer hashes to its head, lost
records or was altered. Compile and resume refuse such a run rather than rebuild the digest over
the damage; ``evidence verify`` names it, hashes the whole journal and compares every result. A
digest is never needed: failing to write one only costs a rebuild later.
"""

import hashlib
import logging
import zipfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from omniqual.domain.result import GateResult
from omniqual.evidence.anchor import AnchorClaim, check_anchor, contradiction
from omniqual.evidence.chain import chain_head
from omniqual.evidence.digest import ResultDigest, digest_reader, read_digests
from omniqual.evidence.durable import write_atomic
from omniqual.evidence.errors import StoreError
from omniqual.evidence.journal import JOURNAL_NAME
from omniqual.evidence.run_digest import (
    DIGEST_NAME,
    FORMAT,
    DigestBuilder,
    JournalStamp,
    RunDigest,
    stamp_journal,
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


def _stored(run_dir: Path) -> RunDigest | None:
    try:
        return RunDigest.load(run_dir / DIGEST_NAME)
    except FileNotFoundError:
        return None
    except _UNREADABLE as exc:
        logger.info("%s: unreadable digest (%s); rebuilding", run_dir / DIGEST_NAME, exc)
        return None


def _describes(digest: RunDigest, journal: Path, size: int) -> bool:
    """Whether ``digest`` was built from the journal exactly as it is (``size`` bytes)."""
    recorded = digest.meta.journal
    if digest.meta.format != FORMAT or recorded.size != size:
        return False
    with journal.open("rb") as handle:
        actual = hashlib.file_digest(handle, "sha256").hexdigest()
    if actual == recorded.sha256 and recorded.head_sha256 == chain_head(journal, size):
        return True
    logger.warning(
        "%s: records the journal as sha256 %.12s…, but at the same size it is %.12s… (or ends "
        "in another line): altered since; not trusted, rebuilt from the journal",
        _digest_path(journal), recorded.sha256, actual,
    )  # fmt: skip
    return False


def _digest_path(journal: Path) -> Path:
    return journal.parent / DIGEST_NAME


def load_current(run_dir: Path) -> RunDigest | None:
    """The stored digest if it describes the journal as it is now, else None."""
    digest = _stored(run_dir)
    journal = run_dir / JOURNAL_NAME
    if digest is None or not _describes(digest, journal, journal.stat().st_size):
        return None
    return digest


def rebuild_digest(run_dir: Path) -> RunDigest:
    """Re-read the journal into a digest and cache it (when the journal held still meanwhile
    and has no torn tail)."""
    journal = run_dir / JOURNAL_NAME
    before = journal.stat().st_size
    reader = digest_reader(run_dir)
    digest = build_digest(read_digests(reader), journal)
    if reader.torn_tail is None and digest.meta.journal.size == before:
        try:
            write_atomic(run_dir / DIGEST_NAME, [digest.save()])
        except OSError as exc:  # read-only evidence: compile still works, just slower
            logger.info("%s: digest not cached (%s)", run_dir, exc)
    return digest


def current_digest(run_dir: Path) -> RunDigest:
    """The run's digest for compile: the stored one while it describes the journal, else
    rebuilt. StoreError when the journal contradicts its anchor (anchor.json or the stored
    digest): it lost records or its anchored end was altered, and compiling it would count
    only what is left."""
    journal = run_dir / JOURNAL_NAME
    size = journal.stat().st_size
    stored = _stored(run_dir)
    try:
        check_anchor(run_dir, journal, size)
        if stored is not None:
            _refuse_contradicted(journal, size, stored.meta.journal)
    except StoreError as exc:
        raise StoreError(
            f"{run_dir}: not compiled, its evidence is damaged (`omniqual evidence verify "
            f"{run_dir}` lists every problem; move the run out of the evidence to compile "
            f"without it): {exc}"
        ) from None
    if stored is not None and _describes(stored, journal, size):
        return stored
    return rebuild_digest(run_dir)


def check_digest_anchor(run_dir: Path, journal_size: int) -> None:
    """Raise StoreError when the stored digest says the journal once ran longer, or ended in
    another line, than its first ``journal_size`` bytes do."""
    stored = _stored(run_dir)
    if stored is not None:
        _refuse_contradicted(run_dir / JOURNAL_NAME, journal_size, stored.meta.journal)


def _claim(journal: Path, stamp: JournalStamp) -> AnchorClaim:
    return AnchorClaim(_digest_path(journal), stamp.size, stamp.lines, stamp.head_sha256)


def _refuse_contradicted(journal: Path, size: int, stamp: JournalStamp) -> None:
    problem = contradiction(journal, size, _claim(journal, stamp))
    if problem is not None:
        raise StoreError(problem)


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
    journal = run_dir / JOURNAL_NAME
    expected = build_digest(results, journal, hosts)
    recorded, actual = stored.meta.journal, expected.meta.journal
    if recorded.size != actual.size:
        problem = contradiction(journal, actual.size, _claim(journal, recorded))
        if problem is not None:
            return [problem], []
    if stored.meta.format != FORMAT:
        return [], [f"{path}: digest format {stored.meta.format}, not {FORMAT} (compile "
                    "rebuilds it)"]  # fmt: skip
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
