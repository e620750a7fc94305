"""Verifying recorded evidence after the fact: is a run directory still what its journal says?

For each run it re-reads the journal (a corrupt line anywhere but the end is damage; a torn final
line is reported as such: a writer stopped mid-write), checks its hash chain (the first record
whose link does not match the line before it is damage, named by line; a journal written before
chaining is a note, never vouched for by the chain), checks the journal against each of its
anchors, ``anchor.json``, run.json's and the digest's (records removed, or an anchored last line
altered, are damage; a journal written before anchoring is a note), recomputes the sha256 of
every artifact the journal records or a result references, hashes the files in ``artifacts/``
that the journal does not know (a file whose name is not its content hash is damage; a
well-named one is what a crash between publication and journaling leaves, a note), compares
``run.json`` with the journal when the run says it finished (a previous session's run.json must
still summarise the journal's first results), and checks the columnar digest compile reads
agrees with the journal (a missing or stale one is a note: compile rebuilds it). The cli formats
the answer; nothing here prints.
"""

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from omniqual.domain.run import RunSummary
from omniqual.evidence.anchor import anchor_findings, claim_of, contradiction
from omniqual.evidence.artifacts import ARTIFACTS_DIR
from omniqual.evidence.chain import ChainCheck, ChainState, check_chain
from omniqual.evidence.digest_files import check_digest
from omniqual.evidence.durable import TEMP_PREFIX
from omniqual.evidence.errors import StoreError
from omniqual.evidence.journal import JOURNAL_NAME
from omniqual.evidence.run_reader import RunContents, read_journal, verify_artifacts

SUMMARY_NAME = "run.json"


class NotARunDirectory(StoreError):
    """A path given to verify that holds no run journal (a usage error, not damage)."""


@dataclass(frozen=True, slots=True)
class RunVerification:
    """What verifying one run directory found."""

    run_dir: Path
    run_id: str | None
    """None when the journal could not be read far enough to say."""
    results: int
    artifacts_checked: int
    """Distinct artifact files hashed (journaled or not)."""
    problems: tuple[str, ...]
    """Each mismatch, one line each: missing or corrupted artifacts, a torn or corrupt
    journal, a run.json that disagrees with the journal."""
    notes: tuple[str, ...] = ()
    """Findings that are not damage (e.g. an unjournaled artifact under its correct hash)."""
    chain: ChainState = "empty"
    """The journal's hash chain: "chained" (every record linked, each link matching), "broken",
    "unchained" (written before chaining) or "partly chained" (an older run resumed since)."""
    anchored: bool = False
    """Whether anchor.json vouches for the journal's end (False: written before anchoring)."""

    @property
    def intact(self) -> bool:
        return not self.problems


def require_run_dirs(paths: Sequence[Path]) -> None:
    """Raise NotARunDirectory naming every path that is not a run directory."""
    bad = [path for path in paths if not (path / JOURNAL_NAME).is_file()]
    if bad:
        names = ", ".join(str(path) for path in bad)
        raise NotARunDirectory(f"not a run directory (no {JOURNAL_NAME}): {names}")


def verify_runs(paths: Sequence[Path]) -> list[RunVerification]:
    """Verify every run directory in ``paths``; all are checked to be run directories first."""
    require_run_dirs(paths)
    return [verify_run(path) for path in paths]


def verify_run(run_dir: Path) -> RunVerification:
    """Verify one run directory (NotARunDirectory if it has no journal)."""
    require_run_dirs([run_dir])
    journal = run_dir / JOURNAL_NAME
    try:
        contents, valid_size = read_journal(run_dir)
    except StoreError as exc:
        # The journal is damaged before its end: nothing it says can be trusted, so its
        # artifacts are not checked against it; the stored files are still hashed.
        chain = check_chain(journal)
        broken, _ = _chain_findings(journal, chain)
        problems, notes, hashed = _unjournaled(run_dir, set())
        return RunVerification(run_dir, None, 0, hashed, (f"journal: {exc}", *broken, *problems),
                               tuple(notes), chain.state)  # fmt: skip
    problems = list(contents.problems)
    if contents.torn_tail:
        problems[0] = f"journal: {problems[0]} (resume cuts it; the record it held is lost)"
    chain = check_chain(journal, valid_size)
    broken, chain_notes = _chain_findings(journal, chain)
    problems += broken
    required = any(start.anchored for start in contents.starts)
    unanchored, anchor_notes, anchored = anchor_findings(
        run_dir, journal, valid_size, required=required
    )
    problems += unanchored
    chain_notes += anchor_notes
    problems += verify_artifacts(run_dir)
    known = {a.sha256 for a in contents.artifacts}
    known |= {a.sha256 for r in contents.results for a in r.artifacts}
    stray, notes, hashed = _unjournaled(run_dir, known)
    problems += stray
    notes = chain_notes + notes
    problems += _summary_problems(run_dir, contents, valid_size)
    digest_problems, digest_notes = check_digest(run_dir, contents.results, contents.result_hosts())
    problems += digest_problems
    notes += digest_notes
    return RunVerification(
        run_dir=run_dir, run_id=contents.run_id, results=len(contents.results),
        artifacts_checked=len(known) + hashed, problems=tuple(problems), notes=tuple(notes),
        chain=chain.state, anchored=anchored,
    )  # fmt: skip


def _chain_findings(journal: Path, chain: ChainCheck) -> tuple[list[str], list[str]]:
    """(problems, notes): the first broken link, or why the chain vouches for fewer records."""
    if chain.broken is not None:
        link = chain.broken
        return [f"journal: {journal}:{link.line}: broken chain: {link.describe()}"], []
    where = f"journal: {journal}:"
    if chain.state == "unchained":
        why = "no links, so an edit in place shows only against run.json and the digest"
        return [], [f"{where} predates chaining: its {chain.records} records carry {why}"]
    if chain.state == "partly chained":
        covered = chain.records - chain.unchained
        why = f"(the run was resumed by a newer omniqual); the chain covers the {covered} after"
        return [], [f"{where} the first {chain.unchained} records predate chaining {why} them"]
    return [], []


def _unjournaled(run_dir: Path, known: set[str]) -> tuple[list[str], list[str], int]:
    """(problems, notes, files hashed) for the files in artifacts/ the journal does not list."""
    problems: list[str] = []
    notes: list[str] = []
    hashed = 0
    directory = run_dir / ARTIFACTS_DIR
    if not directory.is_dir():
        return ([f"{directory}: artifacts directory missing"] if known else []), notes, 0
    for path in sorted(directory.iterdir()):
        if path.name in known:
            continue
        if path.name.startswith(TEMP_PREFIX):
            notes.append(f"{path}: temp file of an interrupted write (resume removes it)")
            continue
        if not path.is_file():
            problems.append(f"{path}: not a file")
            continue
        with path.open("rb") as handle:
            actual = hashlib.file_digest(handle, "sha256").hexdigest()
        hashed += 1
        if actual != path.name:
            problems.append(
                f"{path}: not journaled, and its content hashes to {actual[:12]}…, not its name"
            )
        else:
            notes.append(f"{path}: intact but not journaled (stored before a crash)")
    return problems, notes, hashed


def _summary_problems(run_dir: Path, contents: RunContents, valid_size: int) -> list[str]:
    """run.json must agree with the journal once the journal says the run finished; before, it
    is a previous session's, whose anchor and results the journal must still hold."""
    path = run_dir / SUMMARY_NAME
    if not path.is_file():
        return []  # a finished run's missing summary is noted by the reader
    try:
        summary = RunSummary.model_validate_json(path.read_bytes())
    except (OSError, ValidationError, ValueError) as exc:
        return [f"{path}: unreadable run summary ({type(exc).__name__})"]
    problems: list[str] = []
    if summary.run_id != contents.run_id:
        problems.append(f"{path}: run id {summary.run_id!r}, journal says {contents.run_id!r}")
    if summary.journal is not None:
        journal = run_dir / JOURNAL_NAME
        cut = contradiction(journal, valid_size, claim_of(path, summary.journal))
        problems += [cut] if cut else []
    if contents.finished is None:
        return problems + _lost_results(path, summary, contents)
    if summary.status != contents.finished.status:
        problems.append(
            f"{path}: status {summary.status!r}, journal says {contents.finished.status!r}"
        )
    journaled = [r.result_id for r in contents.results]
    summarized = [r.result_id for r in summary.results]
    if summarized != journaled:
        missing = sorted(set(journaled) - set(summarized))
        extra = sorted(set(summarized) - set(journaled))
        problems.append(
            f"{path}: results disagree with the journal ({len(summarized)} vs {len(journaled)};"
            f" missing {missing[:5]}, not journaled {extra[:5]})"
        )
    else:
        pairs = zip(summary.results, contents.results, strict=True)
        changed = [ours.result_id for ours, theirs in pairs if ours != theirs]
        if changed:
            problems.append(f"{path}: results differ from the journal's: {changed[:5]}")
    return problems


def _lost_results(path: Path, summary: RunSummary, contents: RunContents) -> list[str]:
    """A previous session's run.json summarised the journal's first results; journals only
    grow, so the journal must still begin with them (what it summarises of them is checked
    once the run finishes again and rewrites run.json)."""
    summarized = [r.result_id for r in summary.results]
    held = [r.result_id for r in contents.results]
    if held[: len(summarized)] == summarized:
        return []
    kept = set(held)
    gone = [result_id for result_id in summarized if result_id not in kept]
    counts = f"it summarised {len(summarized)}, the journal holds {len(held)}"
    if gone:
        return [f"{path}: records results the journal no longer holds: {gone[:5]} ({counts}): "
                "records were removed from the journal"]  # fmt: skip
    return [f"{path}: records the journal's first results in another order ({counts})"]
