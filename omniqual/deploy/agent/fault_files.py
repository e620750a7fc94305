"""The fault-injection files on the server's host, as the agent handles them for the harness.

Arming replaces the control file atomically (a temp file beside it, fsynced, then renamed), so
the injector, which rereads the file when its mtime changes, never sees half a :class:`FaultArm`;
disarming replaces it with an empty file. Record lines are read from a line offset on: a last
line without its newline is still being written and is left for the next read.
"""

import contextlib
import os
import tempfile
from pathlib import Path

from pydantic import ValidationError

from omniqual.domain.agent import FaultRecords
from omniqual.domain.fault_injection import FaultArm, FaultRecord


def write_atomically(path: Path, data: bytes) -> None:
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def arm(control: Path, fault: FaultArm) -> None:
    write_atomically(control, fault.model_dump_json().encode() + b"\n")


def disarm(control: Path) -> None:
    write_atomically(control, b"")


def armed(control: Path) -> str | None:
    """The arm id in the control file; None when it is empty, missing or no arm."""
    try:
        text = control.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    if not text:
        return None
    try:
        return FaultArm.model_validate_json(text).arm_id
    except ValidationError:
        return None


def records_after(record: Path, after: int) -> FaultRecords:
    """The complete record lines after the first ``after`` (a missing file holds none)."""
    try:
        data = record.read_bytes()
    except FileNotFoundError:
        return FaultRecords(after=after, next=after)
    lines = data.split(b"\n")[:-1]  # the part after the last newline is not a line yet
    found: list[FaultRecord] = []
    unreadable = 0
    for line in lines[after:]:
        if not line.strip():
            unreadable += 1
            continue
        try:
            found.append(FaultRecord.model_validate_json(line))
        except ValidationError:
            unreadable += 1
    return FaultRecords(after=after, next=max(after, len(lines)), records=tuple(found),
                        unreadable=unreadable)  # fmt: skip
