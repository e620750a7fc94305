"""Reading runs back: one run's contents, finding runs under directories, streaming results,
and verifying a run's artifacts against what its journal recorded."""

import contextlib
import gc
import logging
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path

from omniqual.domain.evidence import Artifact
from omniqual.domain.hardware import measured_on
from omniqual.domain.result import GateResult
from omniqual.domain.run import ArtifactStored, ResultRecorded, RunFinished, RunStarted
from omniqual.evidence.artifacts import artifact_path, check_artifact
from omniqual.evidence.errors import StoreError
from omniqual.evidence.journal import JOURNAL_NAME, AnyRecord, JournalReader

logger = logging.getLogger(__name__)

_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def valid_run_id(run_id: str) -> bool:
    """Run ids become directory names: no separators, no leading dot."""
    return bool(_RUN_ID.match(run_id))


@dataclass(frozen=True, slots=True)
class RunContents:
    """Everything one run's journal holds, in journal order."""

    run_dir: Path
    run_id: str
    starts: tuple[RunStarted, ...]
    """One per session: the creation, then one per resume."""
    results: tuple[GateResult, ...]
    artifacts: tuple[Artifact, ...]
    finished: RunFinished | None
    """The end of the latest session, or None if it never finished (crashed or still running)."""
    torn_tail: bool
    problems: tuple[str, ...]
    """Non-fatal findings (a torn final line, a missing run.json), for display."""
    sessions: tuple[int, ...] = ()
    """Per result, the index in ``starts`` of the session that recorded it."""

    def result_hosts(self) -> list[str | None]:
        """Per result, the host its session ran on (an encoded ``MeasuredOn``)."""
        hosts = [measured_on(start.environment).encode() for start in self.starts]
        return [hosts[i] for i in self.sessions]


def read_run(run_dir: Path) -> RunContents:
    """Read one run from its journal (the source of truth; run.json is not consulted).

    Raises StoreError for a corrupt line before the final one, a record newer than this
    omniqual understands, or a journal that does not start with a run-started record.
    """
    contents, _ = read_journal(run_dir)
    return contents


def read_journal(run_dir: Path) -> tuple[RunContents, int]:
    """:func:`read_run`, plus the journal's byte length up to its last good line."""
    path = run_dir / JOURNAL_NAME
    reader: JournalReader[AnyRecord] = JournalReader(path)
    starts: list[RunStarted] = []
    results: list[GateResult] = []
    sessions: list[int] = []
    artifacts: list[Artifact] = []
    finished: RunFinished | None = None
    with _collector_paused():
        for record in reader:
            if isinstance(record, ResultRecorded):
                results.append(record.result)
                sessions.append(len(starts) - 1)
            elif isinstance(record, ArtifactStored):
                artifacts.append(record.artifact)
            elif isinstance(record, RunStarted):
                starts.append(record)
                finished = None
            else:
                finished = record
            if not starts:
                raise StoreError(f"{path}:1: the journal does not begin with a run-started record")
    if not starts:
        raise StoreError(f"{path}: the journal holds no run-started record")
    problems: list[str] = []
    if reader.torn_tail is not None:
        problems.append(reader.torn_tail.describe(path))
    run_id = starts[0].run_id
    if any(start.run_id != run_id for start in starts):
        problems.append(f"{path}: sessions disagree about the run id")
    if finished is not None and not (run_dir / "run.json").is_file():
        problems.append(f"{run_dir}: run.json is missing although the journal says it finished")
    contents = RunContents(
        run_dir=run_dir,
        run_id=run_id,
        starts=tuple(starts),
        results=tuple(results),
        artifacts=tuple(artifacts),
        finished=finished,
        torn_tail=reader.torn_tail is not None,
        problems=tuple(problems),
        sessions=tuple(sessions),
    )
    return contents, reader.valid_size


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a journal is loaded into memory.

    Parsed records form no reference cycles, but every new object counts towards the next
    collection, and each collection walks all records loaded so far: with the collector on,
    loading 100k results took 6-8x longer (measured in tests/bench/bench_journal_read.py).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def find_runs(paths: Sequence[Path]) -> list[Path]:
    """Run directories named by ``paths``: each is a run directory, a journal file, or a
    directory searched at any depth (dot-directories, e.g. runs being created, are skipped).
    Sorted by run id, which sorts by creation time for generated ids."""
    found: dict[Path, Path] = {}
    for path in paths:
        if path.is_file() and path.name == JOURNAL_NAME:
            path = path.parent
        if (path / JOURNAL_NAME).is_file():
            found.setdefault(path.resolve(), path)
            continue
        if not path.is_dir():
            raise StoreError(f"{path}: neither a run directory nor a directory of runs")
        for dirpath, dirnames, filenames in os.walk(path):
            if JOURNAL_NAME in filenames:
                run = Path(dirpath)
                found.setdefault(run.resolve(), run)
                dirnames.clear()
            else:
                dirnames[:] = [d for d in dirnames if not d.startswith(".")]
    return sorted(found.values(), key=lambda p: (p.name, str(p)))


def iter_results(paths: Sequence[Path]) -> Iterator[GateResult]:
    """Every result in every run under ``paths``, streamed (a run is never held in memory)."""
    for run_dir in find_runs(paths):
        reader: JournalReader[AnyRecord] = JournalReader(run_dir / JOURNAL_NAME)
        for record in reader:
            if isinstance(record, ResultRecorded):
                yield record.result
        if reader.torn_tail is not None:
            logger.info("%s", reader.torn_tail.describe(reader.path))


def verify_artifacts(run_dir: Path) -> list[str]:
    """Problems with the artifacts the journal records or its results reference: missing
    files, size mismatches, corrupted content. Empty when every artifact is intact."""
    contents = read_run(run_dir)
    expected: dict[str, int] = {}
    problems: list[str] = []
    referenced = (artifact for result in contents.results for artifact in result.artifacts)
    for artifact in chain(contents.artifacts, referenced):
        size = expected.setdefault(artifact.sha256, artifact.size)
        if size != artifact.size:
            problems.append(
                f"artifact {artifact.sha256}: recorded with sizes {size} and {artifact.size}"
            )
    for sha256, size in sorted(expected.items()):
        problem = check_artifact(artifact_path(run_dir, sha256), sha256, size)
        if problem is not None:
            problems.append(problem)
    return problems
