"""Finding runs, streaming results across runs, and verifying artifacts."""

from collections.abc import Callable
from pathlib import Path

import pytest

from omniqual.domain.result import GateResult
from omniqual.domain.run import EnvironmentFingerprint
from omniqual.evidence.store import (
    RunWriter,
    StoreError,
    artifact_path,
    find_runs,
    iter_results,
    verify_artifacts,
)

MakeResult = Callable[..., GateResult]


def make_run(
    root: Path, run_id: str, environment: EnvironmentFingerprint, make_result: MakeResult, n: int
) -> Path:
    writer = RunWriter.create(root, command=(), environment=environment, run_id=run_id)
    for i in range(n):
        writer.record(make_result(run_id, f"{run_id}-{i}"))
    writer.finish("completed")
    return writer.run_dir


def test_find_runs_accepts_run_dirs_journals_and_trees(
    tmp_path: Path, environment: EnvironmentFingerprint, make_result: MakeResult
) -> None:
    a = make_run(tmp_path / "evidence" / "lab-a", "2025-b", environment, make_result, 1)
    b = make_run(tmp_path / "evidence" / "deep" / "er", "2025-a", environment, make_result, 1)
    (tmp_path / "evidence" / ".2025-c.creating-1234").mkdir()  # a run still being created
    (tmp_path / "evidence" / ".2025-c.creating-1234" / "journal.jsonl").write_text("")
    (tmp_path / "evidence" / "empty").mkdir()

    assert find_runs([tmp_path / "evidence"]) == [b, a]  # sorted by run id
    assert find_runs([a]) == [a]
    assert find_runs([a / "journal.jsonl", a, tmp_path / "evidence"]) == [b, a]
    assert find_runs([tmp_path / "evidence" / "empty"]) == []
    with pytest.raises(StoreError, match="neither a run directory"):
        find_runs([tmp_path / "missing"])


def test_iter_results_streams_every_run(
    tmp_path: Path, environment: EnvironmentFingerprint, make_result: MakeResult
) -> None:
    make_run(tmp_path, "run-1", environment, make_result, 3)
    second = make_run(tmp_path, "run-2", environment, make_result, 2)
    with (second / "journal.jsonl").open("ab") as handle:
        handle.write(b'{"kind":"res')  # a torn tail is skipped, not fatal
    ids = [r.result_id for r in iter_results([tmp_path])]
    assert ids == ["run-1-0", "run-1-1", "run-1-2", "run-2-0", "run-2-1"]


@pytest.fixture
def stored(writer: RunWriter, make_result: MakeResult) -> tuple[Path, Path, Path]:
    image = writer.put_artifact(
        b"\x89PNG" + bytes(range(256)), media_type="image/png", role="output-image", name="img"
    )
    log = writer.put_artifact(b"server log\n", media_type="text/plain", role="server-log", name="l")
    writer.record(make_result("r1", "res-1", artifacts=(image,)))
    writer.close()
    run_dir = writer.run_dir
    return run_dir, artifact_path(run_dir, image.sha256), artifact_path(run_dir, log.sha256)


def test_intact_artifacts_verify_clean(stored: tuple[Path, Path, Path]) -> None:
    run_dir, _, _ = stored
    assert verify_artifacts(run_dir) == []


def test_verify_catches_a_bit_flipped_artifact(stored: tuple[Path, Path, Path]) -> None:
    run_dir, image, _ = stored
    data = bytearray(image.read_bytes())
    data[10] ^= 0x01
    image.write_bytes(bytes(data))
    (problem,) = verify_artifacts(run_dir)
    assert image.name in problem and "corrupted" in problem


def test_verify_catches_missing_and_truncated_artifacts(stored: tuple[Path, Path, Path]) -> None:
    run_dir, image, log = stored
    image.unlink()
    log.write_bytes(b"server")
    problems = verify_artifacts(run_dir)
    assert len(problems) == 2
    assert any(image.name in p and "missing" in p for p in problems)
    assert any(log.name in p and "size 6 bytes, journal says 11" in p for p in problems)


def test_artifact_path_refuses_anything_but_a_digest(tmp_path: Path) -> None:
    assert artifact_path(tmp_path, "a" * 64) == tmp_path / "artifacts" / ("a" * 64)
    for bad in ("../../etc/passwd", "A" * 64, "a" * 63):
        with pytest.raises(StoreError, match="not a sha256"):
            artifact_path(tmp_path, bad)
