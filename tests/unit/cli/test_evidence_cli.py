"""``omniqual evidence verify`` as a user runs it on damaged and intact runs: exit 0 when every
run is intact, 1 naming each mismatch, 2 for a path that is not a run directory."""

import hashlib
import json
from pathlib import Path

from typer.testing import CliRunner

from omniqual.cli.main import app
from omniqual.domain.outcomes import GateOutcome as O
from omniqual.evidence.verify import verify_run
from tests.fakes.evidence import record_run

runner = CliRunner()
SPECS = [("api-contract", "model=m;task=t2i", O.PASSED), ("soak", "model=m;task=t2i", O.FAILED)]


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["evidence", "verify", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def artifacts(run: Path) -> list[Path]:
    return sorted((run / "artifacts").iterdir())


def test_an_intact_run_exits_0(tmp_path: Path) -> None:
    run = record_run(tmp_path, SPECS)
    code, out, _ = invoke(str(run))
    assert code == 0, out
    assert out.splitlines() == [f"{run}: intact (2 results, 2 artifacts hashed)"]


def test_a_corrupted_artifact_of_the_same_size_is_named(tmp_path: Path) -> None:
    run = record_run(tmp_path, SPECS)
    victim = artifacts(run)[0]
    data = bytearray(victim.read_bytes())
    data[0] ^= 0xFF  # one flipped byte: the size still matches, only the hash tells
    victim.write_bytes(bytes(data))
    code, out, _ = invoke(str(run))
    assert code == 1
    assert f"  MISMATCH {victim}: artifact corrupted (content hashes to" in out
    assert f"{run}: 1 problem(s)" in out


def test_a_missing_artifact_is_named(tmp_path: Path) -> None:
    run = record_run(tmp_path, SPECS)
    victim = artifacts(run)[1]
    victim.unlink()
    code, out, _ = invoke(str(run))
    assert code == 1
    assert f"MISMATCH {victim}: artifact missing" in out


def test_a_torn_last_line_is_reported_as_such(tmp_path: Path) -> None:
    run = record_run(tmp_path, SPECS)
    with (run / "journal.jsonl").open("ab") as journal:
        journal.write(b'{"kind":"result-recorded","res')  # a writer killed mid-write
    lines = len((run / "journal.jsonl").read_bytes().splitlines())
    code, out, _ = invoke(str(run))
    assert code == 1
    assert f"MISMATCH journal: {run / 'journal.jsonl'}:{lines}: torn final line (30 bytes)" in out
    assert "resume cuts it" in out


def test_a_corrupt_line_before_the_end_is_damage(tmp_path: Path) -> None:
    run = record_run(tmp_path, SPECS)
    journal = run / "journal.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    lines[2] = b'{"not": "a record"}\n'
    journal.write_bytes(b"".join(lines))
    code, out, _ = invoke(str(run))
    assert code == 1
    assert f"MISMATCH journal: {journal}:3: corrupt journal record" in out


def test_an_unjournaled_file_is_hashed_too(tmp_path: Path) -> None:
    run = record_run(tmp_path, SPECS)

    good = b"stored, then the harness died before journaling it"
    (run / "artifacts" / hashlib.sha256(good).hexdigest()).write_bytes(good)
    code, out, _ = invoke(str(run))
    assert code == 0, out
    assert "intact but not journaled" in out and "3 artifacts hashed" in out
    forged = run / "artifacts" / ("0" * 64)
    forged.write_bytes(b"anything")
    code, out, _ = invoke(str(run))
    assert code == 1
    assert f"MISMATCH {forged}: not journaled, and its content hashes to" in out


def test_a_run_summary_that_disagrees_with_the_journal_is_named(tmp_path: Path) -> None:
    run = record_run(tmp_path, SPECS)
    summary = json.loads((run / "run.json").read_text())
    summary["results"][1]["outcome"] = "passed"  # someone "fixed" a failure by hand
    (run / "run.json").write_text(json.dumps(summary))
    code, out, _ = invoke(str(run))
    assert code == 1
    result_id = summary["results"][1]["result_id"]
    assert f"run.json: results differ from the journal's: ['{result_id}']" in out


def test_each_run_is_reported_and_one_bad_run_fails_all(tmp_path: Path) -> None:
    good = record_run(tmp_path / "a", SPECS)
    bad = record_run(tmp_path / "b", SPECS)
    artifacts(bad)[0].unlink()
    code, out, _ = invoke(str(good), str(bad), "--json")
    assert code == 1
    docs = [json.loads(line) for line in out.splitlines()]
    assert [(d["run_dir"], d["intact"]) for d in docs] == [(str(good), True), (str(bad), False)]
    assert len(docs[1]["problems"]) == 1


def test_a_path_that_is_not_a_run_directory_exits_2(tmp_path: Path) -> None:
    run = record_run(tmp_path / "runs", SPECS)
    code, out, err = invoke(str(run), str(tmp_path / "runs"), str(tmp_path / "nope"))
    assert code == 2 and out == ""
    assert "not a run directory (no journal.jsonl):" in err
    assert str(tmp_path / "nope") in err and "Traceback" not in err


def test_the_library_returns_what_it_found_without_printing(tmp_path: Path) -> None:
    run = record_run(tmp_path, SPECS)
    checked = verify_run(run)
    assert checked.intact and checked.results == 2 and checked.run_id == run.name
