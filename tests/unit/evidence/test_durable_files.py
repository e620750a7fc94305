"""Atomic publication: the final name holds the old or the whole new file, never a part."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from omniqual.evidence.durable import TEMP_PREFIX, remove_stale_temp_files, write_atomic


def test_write_atomic_replaces_the_file_and_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "run.json"
    target.write_bytes(b"old")
    write_atomic(target, [b"new ", b"content"])
    assert target.read_bytes() == b"new content"
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_a_failed_write_keeps_the_old_file_and_removes_its_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "run.json"
    target.write_bytes(b"old")

    def chunks() -> Iterator[bytes]:
        yield b"partial"
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_atomic(target, chunks())
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_stale_temp_files_are_removed_and_nothing_else(tmp_path: Path) -> None:
    (tmp_path / f"{TEMP_PREFIX}1").write_bytes(b"x")
    (tmp_path / f"{TEMP_PREFIX}2").write_bytes(b"x")
    (tmp_path / "keep").write_bytes(b"x")
    assert remove_stale_temp_files(tmp_path) == 2
    assert [p.name for p in tmp_path.iterdir()] == ["keep"]
