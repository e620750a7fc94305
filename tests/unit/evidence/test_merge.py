"""``evidence merge``: runs of several agents gathered into one root, each once; a conflict is
an error naming both sources; artifacts re-hashed on copy; the merged root verifies."""

import shutil
from pathlib import Path

import pytest

from omniqual.domain.outcomes import GateOutcome as O
from omniqual.evidence.merge import MergeConflict, merge_evidence
from omniqual.evidence.run_reader import find_runs, iter_results
from omniqual.evidence.store import RunWriter
from omniqual.evidence.verify import verify_run
from tests.fakes.evidence import FINGERPRINT, record_run, result

ROW = "model=m;task=t2i;quantization=none;hardware=cpu"


def two_agents(tmp_path: Path) -> tuple[Path, Path]:
    a = record_run(tmp_path / "agent-a", [("contract", ROW, O.PASSED)])
    b = record_run(tmp_path / "agent-b" / "nested", [("load", ROW, O.FAILED)], start_minute=5)
    return a, b


def test_two_runs_merge_into_one_root_that_verifies(tmp_path: Path) -> None:
    a, b = two_agents(tmp_path)
    (a / "logs").mkdir()
    (a / "logs" / "tiny-attempt.log").write_text("server log\n")
    out = tmp_path / "merged"
    merged = merge_evidence([tmp_path / "agent-a", tmp_path / "agent-b"], out)
    assert (out / a.name / "logs" / "tiny-attempt.log").read_text() == "server log\n"
    assert merged.runs == tuple(sorted((a.name, b.name)))
    assert merged.written == merged.runs and merged.results == 2 and merged.artifacts == 2
    assert [p.name for p in find_runs([out])] == sorted((a.name, b.name))
    for run in find_runs([out]):
        check = verify_run(run)
        assert check.intact, check.problems
        assert check.artifacts_checked == 1
    assert sorted(r.gate_id for r in iter_results([out])) == ["contract", "load"]
    for source in (a, b):  # each run is kept as it was recorded, byte for byte
        copy = out / source.name
        assert (copy / "journal.jsonl").read_bytes() == (source / "journal.jsonl").read_bytes()
        assert (copy / "run.json").read_bytes() == (source / "run.json").read_bytes()


def test_the_same_run_twice_is_kept_once_and_merging_again_changes_nothing(
    tmp_path: Path,
) -> None:
    a, _ = two_agents(tmp_path)
    shutil.copytree(a, tmp_path / "downloaded-twice" / a.name)
    out = tmp_path / "merged"
    merged = merge_evidence([tmp_path / "agent-a", tmp_path / "downloaded-twice"], out)
    assert merged.runs == (a.name,) and merged.results == 1
    assert any("kept once" in note for note in merged.notes)
    again = merge_evidence([tmp_path / "agent-a", tmp_path / "agent-b"], out)
    assert again.written == tuple(p.name for p in find_runs([tmp_path / "agent-b"]))
    assert len(again.runs) == 2 and again.results == 2
    into_itself = merge_evidence([out], out)  # the output named as a source too
    assert into_itself.written == () and into_itself.notes == () and into_itself.results == 2


def test_one_result_id_with_different_content_names_both_and_writes_nothing(
    tmp_path: Path,
) -> None:
    a = record_run(tmp_path / "agent-a", [("contract", ROW, O.PASSED)])
    (original,) = list(iter_results([a]))
    writer = RunWriter.create(tmp_path / "agent-b", command=("omniqual",), environment=FINGERPRINT)
    with writer:
        forged = result(writer, "contract", ROW, O.FAILED).model_copy(
            update={"result_id": original.result_id}
        )
        writer.record(forged)
    out = tmp_path / "merged"
    with pytest.raises(MergeConflict) as caught:
        merge_evidence([tmp_path / "agent-a", tmp_path / "agent-b"], out)
    message = str(caught.value)
    assert original.result_id in message
    assert str(a) in message and str(writer.run_dir) in message
    assert not out.exists() or find_runs([out]) == []


def test_diverging_journals_of_one_run_are_a_conflict(tmp_path: Path) -> None:
    a = record_run(tmp_path / "agent-a", [("contract", ROW, O.PASSED)])
    twin = tmp_path / "agent-b" / a.name
    shutil.copytree(a, twin)
    for run_dir, gate in ((a, "load"), (twin, "ff")):
        with RunWriter.resume(run_dir) as writer:
            writer.record(result(writer, gate, ROW))
    with pytest.raises(MergeConflict, match="journals diverge") as caught:
        merge_evidence([tmp_path / "agent-a", tmp_path / "agent-b"], tmp_path / "merged")
    assert str(a) in str(caught.value) and str(twin) in str(caught.value)


def test_an_earlier_copy_of_a_run_gives_way_to_the_longer(tmp_path: Path) -> None:
    writer = RunWriter.create(tmp_path / "live", command=("omniqual",), environment=FINGERPRINT)
    writer.record(result(writer, "contract", ROW))
    early = tmp_path / "early" / writer.run_id
    shutil.copytree(writer.run_dir, early)
    writer.record(result(writer, "load", ROW))
    writer.finish("completed")
    out = tmp_path / "merged"
    first = merge_evidence([tmp_path / "early"], out)  # the early copy lands first
    assert first.results == 1
    merged = merge_evidence([tmp_path / "live"], out)
    assert merged.written == (writer.run_id,) and merged.results == 2
    assert any("earlier copy" in note for note in merged.notes)
    assert verify_run(out / writer.run_id).intact


def test_a_corrupted_artifact_is_refused_naming_the_source(tmp_path: Path) -> None:
    a, _ = two_agents(tmp_path)
    victim = next((a / "artifacts").iterdir())
    data = bytearray(victim.read_bytes())
    data[0] ^= 0xFF
    victim.write_bytes(bytes(data))
    with pytest.raises(MergeConflict, match="damaged evidence") as caught:
        merge_evidence([tmp_path / "agent-a", tmp_path / "agent-b"], tmp_path / "merged")
    assert str(a) in str(caught.value)
    assert not (tmp_path / "merged").exists()
