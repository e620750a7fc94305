"""RunWriter: layout, durability contract, artifacts, finishing, resuming."""

import hashlib
import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from omniqual.domain.result import GateResult
from omniqual.domain.run import EnvironmentFingerprint, RunSummary
from omniqual.evidence import journal as journal_module
from omniqual.evidence.artifacts import ARTIFACTS_DIR
from omniqual.evidence.durable import TEMP_PREFIX
from omniqual.evidence.store import (
    RunWriter,
    StoreError,
    artifact_path,
    new_run_id,
    read_run,
    verify_artifacts,
)

MakeResult = Callable[..., GateResult]


def journal_lines(run_dir: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (run_dir / "journal.jsonl").read_text().splitlines()]


def temp_files(run_dir: Path) -> list[Path]:
    return [p for p in run_dir.rglob("*") if p.name.startswith(TEMP_PREFIX)]


def test_create_lays_out_the_run_and_journals_the_start(
    tmp_path: Path, environment: EnvironmentFingerprint
) -> None:
    writer = RunWriter.create(
        tmp_path,
        command=("omniqual", "run", "--api-key", "s3cret", "--seed", "7"),
        environment=environment,
        run_id="r1",
    )
    writer.close()
    assert writer.run_dir == tmp_path / "r1" and writer.run_id == "r1"
    assert (writer.run_dir / ARTIFACTS_DIR).is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r1"]  # no staging dir left
    (start,) = journal_lines(writer.run_dir)
    assert start["kind"] == "run-started" and start["schema_version"] == 1
    assert start["command"] == ["omniqual", "run", "--api-key", "***", "--seed", "7"]
    raw = (writer.run_dir / "journal.jsonl").read_text()
    assert list(json.loads(raw)) == sorted(json.loads(raw))


def test_create_refuses_an_existing_or_unsafe_run_id(
    writer: RunWriter, environment: EnvironmentFingerprint
) -> None:
    root = writer.run_dir.parent
    with pytest.raises(StoreError, match="already exists"):
        RunWriter.create(root, command=(), environment=environment, run_id="r1")
    for bad in ("../escape", ".hidden", "a/b", ""):
        with pytest.raises(StoreError, match="invalid run id"):
            RunWriter.create(root, command=(), environment=environment, run_id=bad or "/")


def test_generated_run_ids_sort_by_creation_time() -> None:
    early = new_run_id(datetime(2025, 1, 2, 3, 4, 5, 6000, tzinfo=UTC))
    late = new_run_id(datetime(2025, 1, 2, 3, 4, 5, 7000, tzinfo=UTC))
    assert early.startswith("20250102T030405.006Z-")
    assert early < late
    assert new_run_id() != new_run_id()


def test_put_artifact_stores_by_hash_and_deduplicates(writer: RunWriter) -> None:
    first = writer.put_artifact(b"png bytes", media_type="image/png", role="output", name="a")
    second = writer.put_artifact(b"png bytes", media_type="image/png", role="output", name="b")
    assert first.sha256 == second.sha256 == hashlib.sha256(b"png bytes").hexdigest()
    assert first.size == 9
    stored = artifact_path(writer.run_dir, first.sha256)
    assert stored.read_bytes() == b"png bytes"
    assert [p.name for p in (writer.run_dir / ARTIFACTS_DIR).iterdir()] == [first.sha256]
    assert [r["kind"] for r in journal_lines(writer.run_dir)] == [
        "run-started",
        "artifact",
        "artifact",
    ]
    assert temp_files(writer.run_dir) == []


def test_put_artifact_streams_a_file_larger_than_one_chunk(
    writer: RunWriter, tmp_path: Path
) -> None:
    source = tmp_path / "series.bin"
    payload = os.urandom(3 * (1 << 20) + 17)
    source.write_bytes(payload)
    artifact = writer.put_artifact(
        source, media_type="application/octet-stream", role="raw", name="s"
    )
    assert artifact.sha256 == hashlib.sha256(payload).hexdigest()
    assert artifact.size == len(payload)
    assert artifact_path(writer.run_dir, artifact.sha256).read_bytes() == payload
    again = writer.put_artifact(source, media_type="application/octet-stream", role="raw", name="t")
    assert again.sha256 == artifact.sha256
    assert temp_files(writer.run_dir) == []
    with pytest.raises(StoreError, match="cannot read artifact"):
        writer.put_artifact(tmp_path / "absent", media_type="x/y", role="raw", name="n")
    assert temp_files(writer.run_dir) == []


def test_put_artifact_replaces_a_damaged_copy_of_different_size(writer: RunWriter) -> None:
    artifact = writer.put_artifact(b"0123456789", media_type="x/y", role="r", name="n")
    path = artifact_path(writer.run_dir, artifact.sha256)
    path.write_bytes(b"0123")
    writer.put_artifact(b"0123456789", media_type="x/y", role="r", name="n")
    assert path.read_bytes() == b"0123456789"


def test_record_journals_results_and_guards_their_integrity(
    writer: RunWriter, make_result: MakeResult
) -> None:
    artifact = writer.put_artifact(b"log", media_type="text/plain", role="server-log", name="l")
    writer.record(
        make_result("r1", "res-1", artifacts=(artifact,), command=("curl", "--token", "abc"))
    )
    (recorded,) = read_run(writer.run_dir).results
    assert recorded.result_id == "res-1"
    assert recorded.command == ("curl", "--token", "***")
    assert writer.results == (recorded,)
    with pytest.raises(StoreError, match="belongs to run 'other'"):
        writer.record(make_result("other", "res-2"))
    missing = artifact.model_copy(update={"sha256": "f" * 64})
    with pytest.raises(StoreError, match="not in"):
        writer.record(make_result("r1", "res-3", artifacts=(missing,)))
    assert [r.result_id for r in read_run(writer.run_dir).results] == ["res-1"]


def test_finish_writes_run_json_atomically_and_closes(
    writer: RunWriter, make_result: MakeResult
) -> None:
    writer.record(make_result("r1", "res-1"))
    summary = writer.finish("completed")
    path = writer.run_dir / "run.json"
    assert RunSummary.model_validate_json(path.read_bytes()) == summary
    assert summary.status == "completed" and [r.result_id for r in summary.results] == ["res-1"]
    keys = list(json.loads(path.read_text()))
    assert keys == sorted(keys)
    assert temp_files(writer.run_dir) == []
    contents = read_run(writer.run_dir)
    assert contents.finished is not None and contents.finished.results == 1
    assert contents.problems == ()
    with pytest.raises(StoreError, match="already finished"):
        writer.record(make_result("r1", "res-2"))
    with pytest.raises(StoreError, match="already finished"):
        writer.finish("completed")


@pytest.mark.parametrize("error", [RuntimeError("boom"), KeyboardInterrupt()])
def test_context_manager_finishes_as_interrupted_on_exceptions(
    tmp_path: Path,
    environment: EnvironmentFingerprint,
    make_result: MakeResult,
    error: BaseException,
) -> None:
    with (
        pytest.raises(type(error)),
        RunWriter.create(tmp_path, command=(), environment=environment, run_id="r1") as writer,
    ):
        writer.record(make_result("r1", "res-1"))
        raise error
    contents = read_run(tmp_path / "r1")
    assert contents.finished is not None and contents.finished.status == "interrupted"
    assert [r.result_id for r in contents.results] == ["res-1"]


def test_context_manager_completes_on_a_normal_exit(
    tmp_path: Path, environment: EnvironmentFingerprint
) -> None:
    with RunWriter.create(tmp_path, command=(), environment=environment, run_id="r1"):
        pass
    finished = read_run(tmp_path / "r1").finished
    assert finished is not None and finished.status == "completed"


def test_resume_continues_the_run_with_its_earlier_results(
    writer: RunWriter, make_result: MakeResult
) -> None:
    writer.record(make_result("r1", "res-1"))
    writer.close()
    resumed = RunWriter.resume(writer.run_dir)
    assert resumed.run_id == "r1" and [r.result_id for r in resumed.results] == ["res-1"]
    resumed.record(make_result("r1", "res-2"))
    summary = resumed.finish("completed")
    assert [r.result_id for r in summary.results] == ["res-1", "res-2"]
    contents = read_run(writer.run_dir)
    assert len(contents.starts) == 2
    assert contents.starts[1].resumed_from == "r1"
    assert summary.started_at == contents.starts[0].at
    assert contents.finished is not None and contents.finished.results == 2


def test_resume_cuts_a_torn_tail_and_removes_stale_temp_files(
    writer: RunWriter, make_result: MakeResult
) -> None:
    writer.record(make_result("r1", "res-1"))
    writer.close()
    journal = writer.run_dir / "journal.jsonl"
    with journal.open("ab") as handle:
        handle.write(b'{"kind":"result","result":{"resu')
    stale = writer.run_dir / ARTIFACTS_DIR / f"{TEMP_PREFIX}abc"
    stale.write_bytes(b"partial")
    assert read_run(writer.run_dir).torn_tail
    resumed = RunWriter.resume(writer.run_dir)
    resumed.record(make_result("r1", "res-2"))
    resumed.close()
    contents = read_run(writer.run_dir)
    assert not contents.torn_tail and contents.problems == ()
    assert [r.result_id for r in contents.results] == ["res-1", "res-2"]
    assert not stale.exists()


def test_resume_refuses_a_run_another_writer_holds(writer: RunWriter, tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="another process is writing"):
        RunWriter.resume(writer.run_dir)
    with pytest.raises(StoreError, match="not a run directory"):
        RunWriter.resume(tmp_path)


def test_an_append_interrupted_mid_write_leaves_no_torn_line(
    writer: RunWriter, make_result: MakeResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_write_all = journal_module.write_all

    def half_then_interrupt(fd: int, data: bytes | memoryview) -> None:
        real_write_all(fd, bytes(data)[: len(data) // 2])
        raise KeyboardInterrupt

    monkeypatch.setattr(journal_module, "write_all", half_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        writer.record(make_result("r1", "lost"))
    monkeypatch.setattr(journal_module, "write_all", real_write_all)
    writer.record(make_result("r1", "kept"))
    contents = read_run(writer.run_dir)
    assert [r.result_id for r in contents.results] == ["kept"]
    assert not contents.torn_tail
    assert verify_artifacts(writer.run_dir) == []
