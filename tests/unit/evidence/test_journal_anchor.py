"""The journal's end is anchored outside it: ``anchor.json`` after every record, ``run.json`` and
the digest at the run's end. Records cut off the end of a run, or an edit of its last line (which
the hash chain cannot see: that line has no successor), are damage that verify names and that
compile and resume refuse; a run killed between a record and its anchor, a resumed run and a run
written before anchoring read as ever."""

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omniqual.cli.main import app
from omniqual.compile.collect import collect_digests
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.result import GateResult
from omniqual.evidence.digest_files import rebuild_digest
from omniqual.evidence.run_digest import RunDigest
from omniqual.evidence.store import RunWriter, StoreError, read_run
from omniqual.evidence.verify import verify_run

MakeResult = Callable[..., GateResult]
GENESIS = "0" * 64


def finished(writer: RunWriter, make_result: MakeResult, count: int = 3) -> Path:
    for i in range(1, count + 1):
        writer.record(make_result("r1", f"res-{i}"))
    writer.finish("completed")
    return writer.run_dir


def killed(writer: RunWriter, make_result: MakeResult, count: int = 3) -> Path:
    for i in range(1, count + 1):
        writer.record(make_result("r1", f"res-{i}"))
    writer.close()
    assert not (writer.run_dir / "run.json").exists()
    return writer.run_dir


def lines(run: Path) -> list[bytes]:
    return (run / "journal.jsonl").read_bytes().splitlines(keepends=True)


def rewrite(run: Path, new: list[bytes]) -> None:
    (run / "journal.jsonl").write_bytes(b"".join(new))


def cut(run: Path, count: int) -> None:
    rewrite(run, lines(run)[:-count])


def verify_cli(run: Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["evidence", "verify", str(run)])
    return result.exit_code, result.stdout


def as_written_before_anchoring(run: Path) -> None:
    """Make ``run`` what an omniqual before anchoring wrote: no anchor.json, no ``anchored``
    session, no anchor in run.json; the chain and the digest as that writer left them."""
    previous, old = GENESIS, []
    for line in lines(run):
        data = json.loads(line)
        data.pop("anchored", None)
        data["prev_sha256"] = previous
        encoded = (json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n").encode()
        old.append(encoded)
        previous = hashlib.sha256(encoded).hexdigest()
    rewrite(run, old)
    (run / "anchor.json").unlink(missing_ok=True)
    summary = run / "run.json"
    if summary.exists():
        data = json.loads(summary.read_text())
        data.pop("journal", None)
        summary.write_text(json.dumps(data, sort_keys=True, indent=2) + "\n")
        rebuild_digest(run)


# Records cut off the end of a finished run.


def test_records_cut_off_a_finished_run_are_damage_every_anchor_names(
    writer: RunWriter, make_result: MakeResult
) -> None:
    run = finished(writer, make_result)
    cut(run, 2)  # the last result and run-finished: what is left is a valid chain
    assert [r.result_id for r in read_run(run).results] == ["res-1", "res-2"]
    verification = verify_run(run)
    assert verification.chain == "chained"
    assert not verification.intact
    for source in ("anchor.json", "run.json", "digest.npz"):
        assert any(source in p and "shorter than" in p for p in verification.problems), source
    assert not any("stale" in note for note in verification.notes)
    code, out = verify_cli(run)
    assert code == 1 and "MISMATCH" in out and "records were removed" in out


def test_compile_refuses_a_run_cut_short_and_keeps_its_digest(
    writer: RunWriter, make_result: MakeResult, tmp_path: Path
) -> None:
    run = finished(writer, make_result)
    cut(run, 2)
    with pytest.raises(StoreError, match=r"shorter than .*records were removed"):
        collect_digests([run], tmp_path)
    assert len(RunDigest.load(run / "digest.npz")) == 3  # not replaced by a digest of the cut


def test_resume_refuses_a_run_cut_short(writer: RunWriter, make_result: MakeResult) -> None:
    run = finished(writer, make_result)
    cut(run, 2)
    with pytest.raises(StoreError, match="shorter than"):
        RunWriter.resume(run)


def test_an_old_finished_run_cut_short_is_caught_by_its_digest_and_run_json(
    writer: RunWriter, make_result: MakeResult, tmp_path: Path
) -> None:
    run = finished(writer, make_result)
    as_written_before_anchoring(run)
    assert verify_run(run).intact, verify_run(run).problems
    cut(run, 2)
    problems = verify_run(run).problems
    assert any("digest.npz" in p and "shorter than" in p for p in problems), problems
    assert any("run.json" in p and "res-3" in p and "no longer holds" in p for p in problems)
    with pytest.raises(StoreError, match="shorter than"):
        collect_digests([run], tmp_path)


# The last line of a killed run.


def test_an_edit_of_a_killed_runs_last_line_is_damage(
    writer: RunWriter, make_result: MakeResult, tmp_path: Path
) -> None:
    run = killed(writer, make_result)
    journal = lines(run)
    assert b'"outcome":"passed"' in journal[-1]
    journal[-1] = journal[-1].replace(b'"outcome":"passed"', b'"outcome":"failed"')
    rewrite(run, journal)
    verification = verify_run(run)
    assert verification.chain == "chained"  # no line follows it: the chain cannot see this
    (problem,) = verification.problems
    assert "anchor.json" in problem and f"journal.jsonl:{len(journal)}" in problem
    assert "altered" in problem
    assert verify_cli(run)[0] == 1
    with pytest.raises(StoreError, match="altered"):
        collect_digests([run], tmp_path)
    with pytest.raises(StoreError, match="altered"):
        RunWriter.resume(run)


def test_a_missing_anchor_of_an_anchored_journal_is_damage(
    writer: RunWriter, make_result: MakeResult
) -> None:
    run = killed(writer, make_result)
    (run / "anchor.json").unlink()
    (problem,) = verify_run(run).problems
    assert "anchor.json" in problem and "missing" in problem


def test_an_unreadable_anchor_is_damage(writer: RunWriter, make_result: MakeResult) -> None:
    run = killed(writer, make_result)
    (run / "anchor.json").write_text("{not json")
    (problem,) = verify_run(run).problems
    assert "anchor.json" in problem and "unreadable" in problem


# What stays as it was.


def test_the_anchor_follows_every_record(writer: RunWriter, make_result: MakeResult) -> None:
    run = writer.run_dir
    for i in range(1, 3):
        writer.record(make_result("r1", f"res-{i}"))
        anchor = json.loads((run / "anchor.json").read_text())
        data = (run / "journal.jsonl").read_bytes()
        assert anchor["size"] == len(data) and anchor["lines"] == data.count(b"\n") == i + 1
        assert anchor["head_sha256"] == hashlib.sha256(lines(run)[-1]).hexdigest()
        assert anchor["schema_version"] == 1
    summary = writer.finish("completed")
    assert summary.journal is not None
    assert summary.journal.model_dump() == json.loads((run / "anchor.json").read_text())
    assert json.loads(lines(run)[0])["anchored"] is True
    verification = verify_run(run)
    assert verification.intact and verification.anchored, verification.problems


def test_a_run_killed_between_a_record_and_its_anchor_verifies_with_a_note(
    writer: RunWriter, make_result: MakeResult, tmp_path: Path
) -> None:
    run = writer.run_dir
    writer.record(make_result("r1", "res-1"))
    before = (run / "anchor.json").read_bytes()
    writer.record(make_result("r1", "res-2"))
    writer.close()
    (run / "anchor.json").write_bytes(before)  # the writer died before anchoring res-2
    verification = verify_run(run)
    assert verification.intact and verification.anchored, verification.problems
    assert any("1 line after" in note for note in verification.notes), verification.notes
    (located,) = collect_digests([run], tmp_path)
    assert len(located.digest) == 2
    with RunWriter.resume(run) as resumed:
        resumed.record(make_result("r1", "res-3"))
    verification = verify_run(run)
    assert verification.intact and not any("line after" in n for n in verification.notes)


def test_resume_moves_the_anchor_forward(writer: RunWriter, make_result: MakeResult) -> None:
    run = killed(writer, make_result, count=2)
    rewrite(run, [*lines(run), b'{"kind":"result","resu'])  # a torn tail: never anchored
    verification = verify_run(run)
    assert not any("anchor.json" in p for p in verification.problems), verification.problems
    with RunWriter.resume(run) as resumed:
        resumed.record(make_result("r1", "res-3"))
    anchor = json.loads((run / "anchor.json").read_text())
    assert anchor["size"] == len((run / "journal.jsonl").read_bytes())
    verification = verify_run(run)
    assert verification.intact and verification.anchored, verification.problems


def test_a_run_written_before_anchoring_reads_with_a_note_that_it_lacks_the_anchor(
    writer: RunWriter, make_result: MakeResult, tmp_path: Path
) -> None:
    run = killed(writer, make_result)
    as_written_before_anchoring(run)
    assert [r.result_id for r in read_run(run).results] == ["res-1", "res-2", "res-3"]
    verification = verify_run(run)
    assert verification.intact and not verification.anchored, verification.problems
    assert any("predates anchoring" in note for note in verification.notes)
    code, out = verify_cli(run)
    assert code == 0 and out.splitlines()[0].startswith(f"{run}: intact, but unanchored")
    (located,) = collect_digests([run], tmp_path)
    assert [d.outcome for d in located.digest.results()] == [GateOutcome.PASSED] * 3
    with RunWriter.resume(run) as resumed:  # a newer omniqual anchors it from now on
        resumed.record(make_result("r1", "res-4"))
    verification = verify_run(run)
    assert verification.intact and verification.anchored, verification.problems
