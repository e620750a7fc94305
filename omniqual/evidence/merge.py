"""``evidence merge``: the runs of several evidence directories, gathered into one run root.

CI fans a matrix out over many agents; each leaves its own run directories. Merging keeps every
run as it was recorded (its journal is the source of truth and its environment fingerprint is
its agent's; its anchor and run.json go with it, as written), one directory per run id under
the output root, so ``report``, ``matrix compile`` and ``evidence verify`` read the merged root
like any other.

It is content-addressed and conflict-free:

* a run is identified by its run id, a result by its result id, an artifact by its sha256;
* the same run found twice (an artifact downloaded twice, a re-run merge) is kept once;
  when one copy's journal is a prefix of the other's (a copy taken while the run was still
  going), the longer one is kept;
* different content under one result id, or two diverging journals of one run, is a
  :class:`MergeConflict` naming both sources; nothing is written then;
* a source with damaged evidence (what ``evidence verify`` calls a problem, a torn final line
  excepted: it was never acknowledged and is left out) is refused;
* every artifact is re-hashed while it is copied and must match its name.
"""

import hashlib
import os
import secrets
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from omniqual.evidence.anchor import ANCHOR_NAME
from omniqual.evidence.artifacts import ARTIFACTS_DIR, artifact_path, store_file
from omniqual.evidence.durable import fsync_dir, write_atomic
from omniqual.evidence.errors import StoreError
from omniqual.evidence.journal import JOURNAL_NAME
from omniqual.evidence.run_reader import RunContents, find_runs, read_journal
from omniqual.evidence.verify import SUMMARY_NAME, verify_run

LOGS_DIR = "logs"


class MergeConflict(StoreError):
    """The sources disagree about what one id recorded, or one holds damaged evidence."""


@dataclass(frozen=True, slots=True)
class _Source:
    run_dir: Path
    contents: RunContents
    journal: bytes
    """The journal up to its last good line."""
    results: dict[str, str] = field(default_factory=dict)
    """result id -> sha256 of the result's canonical JSON."""
    anchor: bytes | None = None
    """anchor.json as written (None: the run predates anchoring), read before the journal so
    that it never runs ahead of the copy of a run still being written."""


@dataclass(frozen=True, slots=True)
class MergeOutcome:
    out: Path
    runs: tuple[str, ...]
    """Run ids in the merged root, sorted."""
    written: tuple[str, ...]
    """Run ids copied (or replaced by a longer copy) by this merge."""
    results: int
    artifacts: int
    """Artifact files copied and verified."""
    notes: tuple[str, ...]
    """Duplicates kept once, partial copies superseded, torn final lines left out."""


def merge_evidence(sources: Sequence[Path], out: Path) -> MergeOutcome:
    """Merge every run under ``sources`` (and any already in ``out``) into ``out/<run_id>``."""
    if not sources:
        raise StoreError("nothing to merge: name at least one evidence directory")
    missing = [str(p) for p in sources if not p.exists()]
    if missing:
        raise StoreError(f"no such evidence directory: {', '.join(missing)}")
    existing = find_runs([out]) if out.is_dir() else []
    present = {p.resolve() for p in existing}
    run_dirs = [p for p in find_runs(list(sources)) if p.resolve() not in present]
    if not run_dirs and not existing:
        names = ", ".join(str(p) for p in sources)
        raise StoreError(f"no run directory (holding {JOURNAL_NAME}) under {names}")
    notes: list[str] = []
    chosen: dict[str, _Source] = {}
    owner: dict[str, tuple[str, Path]] = {}  # result id -> (content sha, run dir)
    for run_dir in [*existing, *run_dirs]:
        source = _read_source(run_dir, notes)
        _check_results(source, owner)
        kept = chosen.get(source.contents.run_id)
        chosen[source.contents.run_id] = source if kept is None else _pick(kept, source, notes)
    written: list[str] = []
    copied = 0
    for run_id, source in sorted(chosen.items()):
        if source.run_dir.resolve() in present:
            continue  # already in the merged root, as chosen
        copied += _install(source, out / run_id)
        written.append(run_id)
    if written:
        fsync_dir(out)
    results = sum(len(s.contents.results) for s in chosen.values())
    return MergeOutcome(out, tuple(sorted(chosen)), tuple(written), results, copied, tuple(notes))


def _read_source(run_dir: Path, notes: list[str]) -> _Source:
    check = verify_run(run_dir)
    if check.run_id is None:  # the journal is damaged before its end
        raise MergeConflict(f"{run_dir}: damaged evidence is not merged: {check.problems[0]}")
    anchor_file = run_dir / ANCHOR_NAME
    anchor = anchor_file.read_bytes() if anchor_file.is_file() else None
    contents, valid_size = read_journal(run_dir)
    torn = contents.problems[0] if contents.torn_tail else None
    problems = [p for p in check.problems if torn is None or torn not in p]
    if problems:
        raise MergeConflict(
            f"{run_dir}: damaged evidence is not merged ({len(problems)} problem(s); "
            f"`omniqual evidence verify {run_dir}` lists them): {problems[0]}"
        )
    if contents.torn_tail:
        notes.append(f"{run_dir}: torn final journal line left out (never acknowledged)")
    with (run_dir / JOURNAL_NAME).open("rb") as handle:
        journal = handle.read(valid_size)
    digests = {
        r.result_id: hashlib.sha256(r.model_dump_json().encode()).hexdigest()
        for r in contents.results
    }
    return _Source(run_dir, contents, journal, digests, anchor)


def _check_results(source: _Source, owner: dict[str, tuple[str, Path]]) -> None:
    for result_id, digest in source.results.items():
        seen = owner.setdefault(result_id, (digest, source.run_dir))
        if seen[0] != digest:
            raise MergeConflict(
                f"result {result_id} differs between {seen[1]} and {source.run_dir}: the same "
                "result id holds different content, so neither copy can be trusted over the "
                "other; merge them separately or drop one"
            )


def _pick(kept: _Source, other: _Source, notes: list[str]) -> _Source:
    """One run found twice: identical copies are kept once, a prefix gives way to the longer."""
    run_id = kept.contents.run_id
    if kept.journal == other.journal:
        notes.append(f"run {run_id}: same content in {kept.run_dir} and {other.run_dir}, kept once")
        return kept
    longer, shorter = (kept, other) if len(kept.journal) > len(other.journal) else (other, kept)
    if longer.journal.startswith(shorter.journal):
        notes.append(
            f"run {run_id}: {shorter.run_dir} is an earlier copy of {longer.run_dir}; "
            "the longer journal is kept"
        )
        return longer
    raise MergeConflict(
        f"run {run_id} differs between {kept.run_dir} and {other.run_dir}: their journals "
        "diverge (neither is a copy of the other), so the run cannot be merged"
    )


def _install(source: _Source, final: Path) -> int:
    """Copy one run into ``final`` through a staging directory; returns artifacts copied."""
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = final.parent / f".{final.name}.merging-{secrets.token_hex(4)}"
    (staging / ARTIFACTS_DIR).mkdir(parents=True)
    try:
        copied = _copy_artifacts(source, staging)
        write_atomic(staging / JOURNAL_NAME, [source.journal])
        if source.anchor is not None:
            # As written, never re-anchored: the anchor vouches for what its writer made
            # durable (verify checked the journal against it), not for what merge copied.
            write_atomic(staging / ANCHOR_NAME, [source.anchor])
        summary = source.run_dir / SUMMARY_NAME
        if summary.is_file() and source.contents.finished is not None:
            write_atomic(staging / SUMMARY_NAME, [summary.read_bytes()])
        if (source.run_dir / LOGS_DIR).is_dir():
            shutil.copytree(source.run_dir / LOGS_DIR, staging / LOGS_DIR)
        fsync_dir(staging)
        if final.exists():  # an earlier, shorter copy of the same run: replaced whole
            retired = final.parent / f".{final.name}.replaced-{secrets.token_hex(4)}"
            os.rename(final, retired)
            os.rename(staging, final)
            shutil.rmtree(retired)
        else:
            os.rename(staging, final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return copied


def _copy_artifacts(source: _Source, staging: Path) -> int:
    contents = source.contents
    wanted = {a.sha256 for a in contents.artifacts}
    wanted |= {a.sha256 for r in contents.results for a in r.artifacts}
    for sha256 in sorted(wanted):
        origin = artifact_path(source.run_dir, sha256)
        actual, _ = store_file(staging, origin)
        if actual != sha256:
            raise MergeConflict(
                f"{origin}: content hashes to {actual[:12]}… while being copied, not its name"
            )
    return len(wanted)
