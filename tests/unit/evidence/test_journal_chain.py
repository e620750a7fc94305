"""The journal's hash chain: each record carries the sha256 of the line before it, so verify
catches an edit in place, a deleted, reordered or inserted line even in a killed run (no run.json,
no digest), names the first broken link, and says when a journal predates chaining. A deletion or
insertion also moves the journal's end away from its anchor, which verify names after the chain
(the anchor itself is tested in test_journal_anchor)."""

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from omniqual.cli.main import app
from omniqual.domain.evidence import Measurement
from omniqual.domain.result import GateResult
from omniqual.evidence.merge import MergeConflict, merge_evidence
from omniqual.evidence.store import RunWriter, read_run
from omniqual.evidence.verify import verify_run

MakeResult = Callable[..., GateResult]
GENESIS = "0" * 64


def killed(writer: RunWriter, make_result: MakeResult, count: int = 4) -> Path:
    """A run killed after ``count`` results: run-started on line 1, res-i on line i + 1."""
    for i in range(1, count + 1):
        psnr = Measurement(name="psnr", value=40.25 + i, unit="dB")
        writer.record(make_result("r1", f"res-{i}").model_copy(update={"measurements": (psnr,)}))
    writer.close()
    assert not (writer.run_dir / "run.json").exists()
    assert not (writer.run_dir / "digest.npz").exists()
    return writer.run_dir


def lines(run: Path) -> list[bytes]:
    return (run / "journal.jsonl").read_bytes().splitlines(keepends=True)


def rewrite(run: Path, new: list[bytes]) -> None:
    (run / "journal.jsonl").write_bytes(b"".join(new))


def encode(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n").encode()


def sha(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest()


def assert_linked(run: Path) -> None:
    previous = GENESIS
    for line in lines(run):
        assert json.loads(line)["prev_sha256"] == previous
        previous = sha(line)


def as_written_before_chaining(run: Path) -> None:
    """Exactly what an omniqual before chaining wrote: no links, no anchor."""
    old = []
    for line in lines(run):
        data = json.loads(line)
        del data["prev_sha256"]
        data.pop("anchored", None)
        old.append(encode(data))
    rewrite(run, old)
    (run / "anchor.json").unlink()


def verify_cli(run: Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["evidence", "verify", str(run)])
    return result.exit_code, result.stdout


def test_a_one_digit_edit_in_a_killed_run_is_caught_with_its_line(
    writer: RunWriter, make_result: MakeResult
) -> None:
    run = killed(writer, make_result)
    journal = lines(run)
    assert b'"value":42.25' in journal[2]
    journal[2] = journal[2].replace(b'"value":42.25', b'"value":42.35')
    rewrite(run, journal)
    assert [r.result_id for r in read_run(run).results] == ["res-1", "res-2", "res-3", "res-4"]
    (problem,) = verify_run(run).problems
    assert "journal.jsonl:4: broken chain" in problem
    assert "line 3" in problem and sha(journal[2])[:12] in problem
    code, out = verify_cli(run)
    assert code == 1 and "MISMATCH journal:" in out and "intact" not in out


def _delete(journal: list[bytes]) -> list[bytes]:
    return [journal[0], journal[1], journal[3], journal[4]]


def _reorder(journal: list[bytes]) -> list[bytes]:
    return [journal[0], journal[1], journal[3], journal[2], journal[4]]


def _insert_forged(journal: list[bytes]) -> list[bytes]:
    forged = json.loads(journal[2])
    forged["result"]["result_id"] = "res-x"
    forged["prev_sha256"] = sha(journal[2])  # a forger can link the new line itself ...
    return [*journal[:3], encode(forged), *journal[3:]]  # ... but not the line after it


def _insert_unchained(journal: list[bytes]) -> list[bytes]:
    old_style = json.loads(journal[2])
    del old_style["prev_sha256"]
    old_style["result"]["result_id"] = "res-x"
    return [*journal[:3], encode(old_style), *journal[3:]]


def _delete_first(journal: list[bytes]) -> list[bytes]:
    return journal[1:]


@pytest.mark.parametrize(
    ("tamper", "line", "anchor"),
    [
        (_delete, 3, "shorter than"),
        (_reorder, 3, None),  # the same bytes end the journal at the same length
        (_insert_forged, 5, "journal.jsonl:5: the line ending at byte"),
        (_insert_unchained, 4, "journal.jsonl:5: the line ending at byte"),
    ],
)
def test_deleted_reordered_and_inserted_lines_are_caught(
    writer: RunWriter,
    make_result: MakeResult,
    tamper: Callable[[list[bytes]], list[bytes]],
    line: int,
    anchor: str | None,
) -> None:
    run = killed(writer, make_result)
    rewrite(run, tamper(lines(run)))
    verification = verify_run(run)
    assert verification.chain == "broken"
    problem, *anchored = verification.problems
    assert f"journal.jsonl:{line}: broken chain" in problem
    if anchor is None:
        assert anchored == []
    else:
        (moved,) = anchored
        assert anchor in moved and "anchor.json" in moved
    assert verify_cli(run)[0] == 1


def test_a_journal_missing_its_first_record_is_caught(
    writer: RunWriter, make_result: MakeResult
) -> None:
    run = killed(writer, make_result)
    journal = lines(run)
    rewrite(run, [journal[0], *journal[2:]])  # the first result gone: line 2 breaks
    problem, shorter = verify_run(run).problems
    assert "journal.jsonl:2: broken chain" in problem
    assert "shorter than" in shorter and "anchor.json" in shorter


def test_merge_refuses_a_broken_chain_even_beside_a_torn_tail(
    writer: RunWriter, make_result: MakeResult, tmp_path: Path
) -> None:
    run = killed(writer, make_result)
    rewrite(run, [*_reorder(lines(run)), b'{"kind":"result","resu'])
    with pytest.raises(MergeConflict, match=r"journal\.jsonl:3: broken chain"):
        merge_evidence([run], tmp_path / "merged")


def test_an_intact_killed_run_verifies_by_its_chain(
    writer: RunWriter, make_result: MakeResult
) -> None:
    run = killed(writer, make_result)
    assert_linked(run)
    verification = verify_run(run)
    assert verification.intact and verification.chain == "chained", verification.problems


def test_an_old_unchained_journal_reads_and_verify_says_it_predates_chaining(
    writer: RunWriter, make_result: MakeResult
) -> None:
    run = killed(writer, make_result)
    as_written_before_chaining(run)
    assert [r.result_id for r in read_run(run).results] == ["res-1", "res-2", "res-3", "res-4"]
    verification = verify_run(run)
    assert verification.intact and verification.chain == "unchained"
    assert any("predates chaining" in note for note in verification.notes)
    code, out = verify_cli(run)
    assert code == 0
    assert out.splitlines()[0].startswith(f"{run}: intact, but unchained")


def test_resume_continues_the_chain_from_the_last_record_on_disk(
    writer: RunWriter, make_result: MakeResult
) -> None:
    run = killed(writer, make_result, count=2)
    rewrite(run, [*lines(run), b'{"kind":"result","resu'])  # a torn tail, cut on resume
    with RunWriter.resume(run) as resumed:
        resumed.record(make_result("r1", "res-3"))
    assert_linked(run)
    assert len(lines(run)) == 6  # start, 2 results, start, result, finish
    verification = verify_run(run)
    assert verification.intact and verification.chain == "chained", verification.problems


def test_resuming_an_unchained_run_chains_what_follows(
    writer: RunWriter, make_result: MakeResult
) -> None:
    run = killed(writer, make_result, count=2)
    as_written_before_chaining(run)
    with RunWriter.resume(run) as resumed:
        resumed.record(make_result("r1", "res-3"))
    journal = lines(run)
    assert json.loads(journal[3])["prev_sha256"] == sha(journal[2])
    verification = verify_run(run)
    assert verification.intact and verification.chain == "partly chained"
    assert any("first 3 records predate chaining" in note for note in verification.notes)
