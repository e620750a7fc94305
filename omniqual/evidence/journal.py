"""The append-only run journal: durable appends and a streaming, tolerant reader.

One JSON record per line, keys sorted. Each append is a single ``os.write`` of the whole line
followed by ``os.fsync``, so after a crash at most the final line is torn. The reader parses each
line with pydantic's Rust JSON validator (the hot path when compiling a million results), falls
back to ``json.loads`` only to upgrade older records or to explain a failure, tolerates a torn
final line (reported, never fatal), and refuses a corrupt line anywhere else, naming file:line.
The appender links each record to the line before it (the hash chain, see
:mod:`omniqual.evidence.chain`), continuing from the last line on disk, and anchors the journal
after every record it makes durable (see :mod:`omniqual.evidence.anchor`).
"""

import fcntl
import functools
import json
import logging
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from omniqual.domain.result import RESULT_SCHEMA_VERSION
from omniqual.domain.run import (
    JOURNAL_SCHEMA_VERSION,
    ArtifactStored,
    JournalAnchor,
    JournalRecord,
    ResultRecorded,
    RunFinished,
    RunStarted,
)
from omniqual.evidence.anchor import count_lines, write_anchor
from omniqual.evidence.chain import chain_head, line_sha256
from omniqual.evidence.durable import write_all
from omniqual.evidence.errors import StoreError
from omniqual.evidence.migrations import NoMigrationError, TooNewError, upgrade_journal_record

logger = logging.getLogger(__name__)

JOURNAL_NAME = "journal.jsonl"

AnyRecord = RunStarted | ResultRecorded | ArtifactStored | RunFinished
T = TypeVar("T")


@functools.cache
def _adapter() -> TypeAdapter[AnyRecord]:
    adapter: TypeAdapter[AnyRecord] = TypeAdapter(JournalRecord)
    return adapter


def encode_record(record: BaseModel) -> bytes:
    """The record's journal line: compact JSON with sorted keys, newline-terminated."""
    text = json.dumps(
        record.model_dump(mode="json"), sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )
    return (text + "\n").encode()


def encode_linked(record: AnyRecord, prev_sha256: str) -> bytes:
    """The record's journal line, linked to the line before it (``prev_sha256``)."""
    return encode_record(record.model_copy(update={"prev_sha256": prev_sha256}))


class JournalAppender:
    """Appends records durably to one journal, holding an exclusive advisory lock on it, and
    anchors the journal (``anchor.json`` beside it) after each record."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._fd)
            raise StoreError(f"{path}: another process is writing this run") from None
        self._size = os.fstat(self._fd).st_size
        self._head = chain_head(path, self._size)
        self._lines = count_lines(path, self._size)
        self._dirty = False
        self._mutex = threading.Lock()

    @property
    def anchor(self) -> JournalAnchor:
        """The journal as this appender made it durable: length, lines and last line's hash."""
        return JournalAnchor(size=self._size, lines=self._lines, head_sha256=self._head)

    @property
    def lines(self) -> int:
        """Lines in the journal (one per record), the ones this appender wrote included."""
        return self._lines

    def truncate(self, size: int) -> None:
        """Cut the journal to ``size`` bytes (repairing a torn tail) and make it durable."""
        with self._mutex:
            os.ftruncate(self._fd, size)
            os.fsync(self._fd)
            self._size = size
            self._head = chain_head(self.path, size)
            self._lines = count_lines(self.path, size)
            self._dirty = False

    def write_anchor(self) -> None:
        """Anchor the journal as it is now (a resumed run anchors what it continues)."""
        with self._mutex:
            write_anchor(self.path.parent, self.anchor)

    def append(self, record: AnyRecord) -> None:
        """Write one record as one line, linked to the line before it; returns only once the
        line is on stable storage."""
        with self._mutex:
            if self._fd < 0:
                raise StoreError(f"{self.path}: the journal is closed")
            line = encode_linked(record, self._head)
            if self._dirty:
                # A previous append was interrupted (e.g. KeyboardInterrupt mid-write): drop its
                # partial line so it cannot end up torn in the middle of the journal.
                os.ftruncate(self._fd, self._size)
            self._dirty = True
            write_all(self._fd, line)
            os.fsync(self._fd)
            self._size += len(line)
            self._head = line_sha256(line)
            self._lines += 1
            self._dirty = False
            try:
                write_anchor(self.path.parent, self.anchor)
            except OSError:
                # The record is durable and stays; only its anchor is missing. Failing the
                # append would make the caller believe it was not recorded. verify notes a
                # journal that runs ahead of its anchor.
                logger.warning("%s: journal not anchored", self.path, exc_info=True)

    def close(self) -> None:
        with self._mutex:
            if self._fd >= 0:
                os.close(self._fd)  # also releases the lock
                self._fd = -1


@dataclass(frozen=True, slots=True)
class TornTail:
    """A final line a crash left incomplete; it was never acknowledged as durable."""

    line: int
    size: int

    def describe(self, path: Path) -> str:
        return (
            f"{path}:{self.line}: torn final line ({self.size} bytes) ignored; "
            "the writer stopped mid-write"
        )


class _Corrupt(Exception):
    pass


class JournalReader(Generic[T]):
    """Iterates one journal's records in order.

    After iteration, ``torn_tail`` describes an ignored torn final line (or is None) and
    ``valid_size`` is the byte length of the journal up to the end of its last good line.
    """

    def __init__(self, path: Path, parse: "Callable[[bytes], T] | None" = None) -> None:
        self.path = path
        self.torn_tail: TornTail | None = None
        self.valid_size = 0
        # A reader may parse into a lighter view (compile reads digests of a million results).
        self._parse: Callable[[bytes], T] = parse or _parse  # type: ignore[assignment]

    def __iter__(self) -> Iterator[T]:
        self.torn_tail = None
        self.valid_size = 0
        try:
            handle = self.path.open("rb")
        except FileNotFoundError:
            raise StoreError(f"{self.path}: no journal here; is this a run directory?") from None
        with handle:
            for lineno, raw in enumerate(handle, 1):
                if not raw.endswith(b"\n"):
                    self.torn_tail = TornTail(lineno, len(raw))
                    return
                if not raw.strip():
                    self.valid_size += len(raw)
                    continue
                try:
                    record = self._parse(raw)
                except (TooNewError, NoMigrationError) as exc:
                    raise StoreError(f"{self.path}:{lineno}: {exc}") from None
                except _Corrupt as exc:
                    rest = handle.read()
                    if rest.strip(b"\x00 \t\r\n"):
                        raise StoreError(
                            f"{self.path}:{lineno}: corrupt journal record ({exc}); only the "
                            "final line of a journal may be torn, so this run's evidence is "
                            "damaged"
                        ) from None
                    self.torn_tail = TornTail(lineno, len(raw) + len(rest))
                    return
                self.valid_size += len(raw)
                yield record


def _is_current(record: AnyRecord) -> bool:
    if record.schema_version != JOURNAL_SCHEMA_VERSION:
        return False
    return not (
        isinstance(record, ResultRecorded) and record.result.schema_version != RESULT_SCHEMA_VERSION
    )


def parse_record(raw: bytes) -> AnyRecord:
    """Parse one journal line into a current record (upgrading older ones)."""
    return _parse(raw)


def _parse(raw: bytes) -> AnyRecord:
    adapter = _adapter()
    try:
        record = adapter.validate_json(raw)
    except ValidationError:
        pass
    else:
        if _is_current(record):
            return record
    # Slow path: an older (or newer) record, or a damaged one; look at it as plain JSON.
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise _Corrupt(f"not JSON: {exc.__class__.__name__}") from None
    if not isinstance(data, dict):
        raise _Corrupt("not a JSON object")
    try:
        data = upgrade_journal_record(data)
    except (TooNewError, NoMigrationError):
        raise
    except ValueError as exc:
        raise _Corrupt(str(exc)) from None
    try:
        return adapter.validate_python(data)
    except ValidationError as exc:
        raise _Corrupt(_summarize(exc)) from None


def _summarize(exc: ValidationError) -> str:
    # Never echo input values: a damaged record may hold anything.
    errors = exc.errors(include_url=False, include_input=False, include_context=False)
    first = errors[0] if errors else None
    where = ".".join(str(part) for part in first["loc"]) if first else "?"
    what = first["msg"] if first else "invalid"
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {what}{more}"
