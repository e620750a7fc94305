"""Durable file primitives: atomic publication through a fsynced temp file, and directory fsync.

A file reaches its final name only through ``os.replace`` of a complete, fsynced temp file in
the same directory, followed by a fsync of the directory so the rename itself survives a crash.
Readers therefore see either nothing or the whole file under the final name; a crash can leave a
temp file behind (named with :data:`TEMP_PREFIX`), never a partial file at the final name.
"""

import contextlib
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

TEMP_PREFIX = ".tmp-"
"""Every temp file starts with this; stale ones may be deleted when no writer holds the run."""


def fsync_dir(path: Path) -> None:
    """Make the directory's entries (creations, renames) durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes | memoryview) -> None:
    """``os.write`` until every byte is written (a short write is legal for regular files)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


@contextlib.contextmanager
def temp_file_in(directory: Path) -> Iterator[tuple[int, Path]]:
    """A new temp file in ``directory`` as (fd, path); the fd is closed on exit and the file
    removed if the block raised (a completed block keeps the file for :func:`publish`)."""
    fd, name = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=directory)
    path = Path(name)
    closed = False
    try:
        yield fd, path
        os.fsync(fd)
        os.close(fd)
        closed = True
    except BaseException:
        if not closed:
            os.close(fd)
        path.unlink(missing_ok=True)
        raise


def publish(temp: Path, final: Path) -> None:
    """Atomically move a complete, fsynced temp file to its final name and make it durable."""
    os.replace(temp, final)
    fsync_dir(final.parent)


def write_atomic(path: Path, chunks: Iterable[bytes]) -> None:
    """Write ``chunks`` to ``path`` atomically: readers see the old file or the whole new one."""
    with temp_file_in(path.parent) as (fd, temp):
        for chunk in chunks:
            write_all(fd, chunk)
    try:
        publish(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def remove_stale_temp_files(directory: Path) -> int:
    """Delete temp files a crashed writer left in ``directory``; returns how many."""
    removed = 0
    for entry in directory.glob(f"{TEMP_PREFIX}*"):
        if entry.is_file():
            entry.unlink(missing_ok=True)
            removed += 1
    return removed
