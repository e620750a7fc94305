"""The evidence store: one directory per run, written crash-safely, read tolerantly.

Layout of ``<root>/<run_id>/``::

    journal.jsonl        append-only records (the source of truth; see omniqual.evidence.journal)
    anchor.json          the journal's length and last line's hash, rewritten atomically after
                         every record (see omniqual.evidence.anchor)
    run.json             RunSummary, written atomically when the run finishes (a convenience
                         that anchors the journal's end too)
    digest.npz           the results as columns, for compile (a cache; see run_digest)
    artifacts/<sha256>   content-addressed evidence files, each published atomically

A run directory appears under its final name only once its journal holds the run-started record
and its anchor (it is staged under a dot-name and renamed), so every run directory a reader finds
is readable. A run is resumed only while its journal agrees with its anchors: the anchor moves
forward only, never over records cut off the journal.
"""

import json
import logging
import os
import secrets
import shutil
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Literal, Self

from omniqual.domain.evidence import Artifact
from omniqual.domain.hardware import measured_on
from omniqual.domain.redaction import redact_command
from omniqual.domain.result import GateResult
from omniqual.domain.run import (
    ArtifactStored,
    EnvironmentFingerprint,
    JournalAnchor,
    ResultRecorded,
    RunFinished,
    RunStarted,
    RunSummary,
)
from omniqual.evidence.anchor import check_anchor, write_anchor
from omniqual.evidence.artifacts import ARTIFACTS_DIR, artifact_path, store_bytes, store_file
from omniqual.evidence.chain import GENESIS, line_sha256
from omniqual.evidence.digest_files import check_digest_anchor, write_digest
from omniqual.evidence.durable import (
    fsync_dir,
    remove_stale_temp_files,
    write_all,
    write_atomic,
)
from omniqual.evidence.errors import StoreError
from omniqual.evidence.journal import JOURNAL_NAME, JournalAppender, encode_linked
from omniqual.evidence.run_reader import (
    RunContents,
    find_runs,
    iter_results,
    read_journal,
    read_run,
    valid_run_id,
    verify_artifacts,
)

logger = logging.getLogger(__name__)

SUMMARY_NAME = "run.json"

RunStatus = Literal["completed", "interrupted", "failed"]


def new_run_id(now: datetime | None = None) -> str:
    """A run id that sorts by creation time: UTC timestamp (ms) plus a short random suffix."""
    now = now or datetime.now(UTC)
    return f"{now.strftime('%Y%m%dT%H%M%S')}.{now.microsecond // 1000:03d}Z-{secrets.token_hex(3)}"


def encode_summary(summary: RunSummary) -> bytes:
    text = json.dumps(summary.model_dump(mode="json"), sort_keys=True, indent=2, ensure_ascii=False)
    return (text + "\n").encode()


class RunWriter:
    """Writes one run; every method returns only once what it recorded is durable.

    Use :meth:`create` or :meth:`resume`. As a context manager it finishes the run as
    "completed" on a normal exit and as "interrupted" when an exception (including
    KeyboardInterrupt) escapes, unless :meth:`finish` was already called.
    """

    def __init__(
        self,
        run_dir: Path,
        start: RunStarted,
        started_at: datetime,
        journal: JournalAppender,
        results: list[GateResult],
        hosts: list[str | None],
    ) -> None:
        self._run_dir = run_dir
        self._start = start
        self._started_at = started_at
        self._journal = journal
        self._results = results
        # Per result, the host its session ran on (the digest keeps it with the result).
        self._hosts = hosts
        self._host = measured_on(start.environment).encode()
        self._summary: RunSummary | None = None

    @property
    def run_dir(self) -> Path:
        return self._run_dir

    @property
    def run_id(self) -> str:
        return self._start.run_id

    @property
    def results(self) -> tuple[GateResult, ...]:
        """Every result of this run so far, earlier sessions included."""
        return tuple(self._results)

    @classmethod
    def create(
        cls,
        root: Path,
        *,
        command: Sequence[str],
        environment: EnvironmentFingerprint,
        run_id: str | None = None,
    ) -> "RunWriter":
        """Start a new run in ``root/<run_id>``; the command is stored with secrets redacted."""
        run_id = run_id or new_run_id()
        if not valid_run_id(run_id):
            raise StoreError(f"invalid run id {run_id!r}: use letters, digits, '.', '_', '-'")
        root.mkdir(parents=True, exist_ok=True)
        final = root / run_id
        if final.exists():
            raise StoreError(f"{final}: a run with this id already exists (resume it instead)")
        start = RunStarted(
            run_id=run_id,
            at=datetime.now(UTC),
            command=redact_command(command),
            environment=environment,
            anchored=True,
        )
        staging = root / f".{run_id}.creating-{secrets.token_hex(4)}"
        staging.mkdir()
        try:
            (staging / ARTIFACTS_DIR).mkdir()
            fd = os.open(staging / JOURNAL_NAME, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            line = encode_linked(start, GENESIS)
            try:
                write_all(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)
            anchor = JournalAnchor(size=len(line), lines=1, head_sha256=line_sha256(line))
            write_anchor(staging, anchor)
            fsync_dir(staging)
            os.rename(staging, final)
        except BaseException as exc:
            shutil.rmtree(staging, ignore_errors=True)
            if isinstance(exc, OSError) and final.exists():
                raise StoreError(f"{final}: a run with this id already exists") from None
            raise
        fsync_dir(root)
        logger.info("run %s created in %s", run_id, final)
        return cls(final, start, start.at, JournalAppender(final / JOURNAL_NAME), [], [])

    @classmethod
    def resume(
        cls,
        run_dir: Path,
        *,
        command: Sequence[str] | None = None,
        environment: EnvironmentFingerprint | None = None,
    ) -> "RunWriter":
        """Continue a run: cut a torn final line, check the journal against its anchors (a run
        that lost records or whose anchored end was altered is refused: resuming would anchor
        the damage), drop stale temp files, anchor the journal as it is and append a run-started
        record with ``resumed_from`` = the run id, linked to the last record on disk (the chain
        continues). Command and environment default to those of the previous session."""
        journal = JournalAppender(run_dir / JOURNAL_NAME) if _has_journal(run_dir) else None
        if journal is None:
            raise StoreError(f"{run_dir}: no {JOURNAL_NAME} here; not a run directory")
        try:
            contents, valid_size = read_journal(run_dir)
            if contents.torn_tail:
                logger.warning("%s; cutting it before resuming", contents.problems[0])
                journal.truncate(valid_size)
            try:
                check_anchor(run_dir, run_dir / JOURNAL_NAME, valid_size)
                check_digest_anchor(run_dir, valid_size)
            except StoreError as exc:
                raise StoreError(
                    f"{run_dir}: not resumed, its evidence is damaged (`omniqual evidence verify "
                    f"{run_dir}` lists every problem): {exc}"
                ) from None
            (run_dir / ARTIFACTS_DIR).mkdir(exist_ok=True)
            removed = remove_stale_temp_files(run_dir) + remove_stale_temp_files(
                run_dir / ARTIFACTS_DIR
            )
            if removed:
                logger.info("removed %d stale temp file(s) from %s", removed, run_dir)
            previous = contents.starts[-1]
            start = RunStarted(
                run_id=contents.run_id,
                at=datetime.now(UTC),
                command=previous.command if command is None else redact_command(command),
                environment=environment or previous.environment,
                resumed_from=contents.run_id,
                anchored=True,
            )
            # Anchor what is continued before appending to it, so a run written before
            # anchoring never reads as an anchored one that lost its anchor.
            journal.write_anchor()
            journal.append(start)
        except BaseException:
            journal.close()
            raise
        logger.info("run %s resumed (%d results so far)", start.run_id, len(contents.results))
        return cls(run_dir, start, contents.starts[0].at, journal, list(contents.results),
                   contents.result_hosts())  # fmt: skip

    def put_artifact(
        self, data: bytes | Path, *, media_type: str, role: str, name: str
    ) -> Artifact:
        """Store a file (streamed in chunks) or bytes under its sha256 and journal it."""
        self._check_open()
        if isinstance(data, Path):
            sha256, size = store_file(self._run_dir, data)
        else:
            sha256, size = store_bytes(self._run_dir, bytes(data))
        artifact = Artifact(sha256=sha256, size=size, media_type=media_type, role=role, name=name)
        self._journal.append(ArtifactStored(artifact=artifact))
        return artifact

    def record(self, result: GateResult) -> None:
        """Journal one result. Its artifacts must already be in this run's store."""
        self._check_open()
        if result.run_id != self.run_id:
            raise StoreError(
                f"result {result.result_id} belongs to run {result.run_id!r}, not {self.run_id!r}"
            )
        for artifact in result.artifacts:
            if not artifact_path(self._run_dir, artifact.sha256).is_file():
                raise StoreError(
                    f"result {result.result_id} references artifact {artifact.sha256[:12]}… "
                    f"({artifact.name}) that is not in {self._run_dir / ARTIFACTS_DIR}"
                )
        redacted = redact_command(result.command)
        if redacted != result.command:
            result = result.model_copy(update={"command": redacted})
        lines = self._journal.lines
        try:
            self._journal.append(ResultRecorded(result=result))
        finally:
            # Journaled even when interrupted while anchoring it: run.json and the digest must
            # hold every result the journal does.
            if self._journal.lines > lines:
                self._results.append(result)
                self._hosts.append(self._host)

    def finish(self, status: RunStatus) -> RunSummary:
        """Journal the end of the run, write run.json atomically and close the journal."""
        self._check_open()
        at = datetime.now(UTC)
        try:
            self._journal.append(
                RunFinished(run_id=self.run_id, at=at, status=status, results=len(self._results))
            )
            summary = RunSummary(
                run_id=self.run_id,
                started_at=self._started_at,
                finished_at=at,
                status=status,
                command=self._start.command,
                environment=self._start.environment,
                results=tuple(self._results),
                journal=self._journal.anchor,
            )
            write_atomic(self._run_dir / SUMMARY_NAME, [encode_summary(summary)])
        finally:
            self._journal.close()
        self._summary = summary
        try:
            write_digest(self._run_dir, self._results, self._hosts)
        except Exception:
            # The digest only saves compile a re-read of the journal; never fail a run on it.
            logger.warning("run %s: digest not written", self.run_id, exc_info=True)
        logger.info("run %s finished: %s, %d results", self.run_id, status, len(self._results))
        return summary

    def close(self) -> None:
        """Release the journal without recording an end: the run reads as unfinished and can
        be resumed. A no-op after :meth:`finish`."""
        self._journal.close()

    def _check_open(self) -> None:
        if self._summary is not None:
            raise StoreError(f"run {self.run_id} is already finished")

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._summary is not None:
            return
        if exc_type is None:
            self.finish("completed")
            return
        try:
            self.finish("interrupted")
        except Exception:
            # Never mask the exception that ended the run; the journal still holds every result.
            logger.exception("could not record the interruption of run %s", self.run_id)


def _has_journal(run_dir: Path) -> bool:
    return (run_dir / JOURNAL_NAME).is_file()


__all__ = [
    "RunContents",
    "RunStatus",
    "RunWriter",
    "StoreError",
    "artifact_path",
    "find_runs",
    "iter_results",
    "new_run_id",
    "read_run",
    "verify_artifacts",
]
