"""evidence verify checks the columnar digest against the journal: a disagreeing digest is a
failure with the reason, a missing or stale one only a note (compile rebuilds it)."""

import dataclasses
from pathlib import Path

import numpy as np

from omniqual.domain.outcomes import GateOutcome as O
from omniqual.evidence.run_digest import CODE_COLUMNS, DIGEST_NAME, RunDigest
from omniqual.evidence.store import RunWriter
from omniqual.evidence.verify import verify_run
from tests.fakes.evidence import record_run, result

ROW = "model=m;task=t2i;quantization=none;hardware=cpu"


def recorded(tmp_path: Path) -> Path:
    return record_run(tmp_path, [("contract", ROW, O.PASSED), ("load", ROW, O.FAILED)])


def test_an_agreeing_digest_verifies_clean(tmp_path: Path) -> None:
    verification = verify_run(recorded(tmp_path))
    assert verification.intact, verification.problems
    assert not any(DIGEST_NAME in note for note in verification.notes)


def test_a_tampered_digest_fails_with_the_result_and_field(tmp_path: Path) -> None:
    run = recorded(tmp_path)
    digest = RunDigest.load(run / DIGEST_NAME)
    codes = digest.codes.copy()
    outcome = CODE_COLUMNS.index("outcome")
    codes[1, outcome] = codes[0, outcome]  # the failed result now reads as passed
    (run / DIGEST_NAME).write_bytes(dataclasses.replace(digest, codes=codes).save())
    verification = verify_run(run)
    assert not verification.intact
    (problem,) = verification.problems
    assert "disagrees with the journal: result 2" in problem
    assert "differs in outcome" in problem


def test_a_digest_with_a_result_dropped_fails(tmp_path: Path) -> None:
    run = recorded(tmp_path)
    digest = RunDigest.load(run / DIGEST_NAME)
    meta = digest.meta.model_copy(update={"results": 1})
    fewer = dataclasses.replace(
        digest, meta=meta, codes=digest.codes[:1], id_offsets=digest.id_offsets[:2],
        versions=digest.versions[:1], startup_only=digest.startup_only[:1],
        finished_us=digest.finished_us[:1], finished_offset=digest.finished_offset[:1],
        reasons=digest.reasons[:1], limitations=digest.limitations[:1],
        artifacts=(digest.artifacts[0][:2], digest.artifacts[1]),
    )  # fmt: skip
    (run / DIGEST_NAME).write_bytes(fewer.save())
    (problem,) = verify_run(run).problems
    assert "1 results, the journal holds 2" in problem


def test_a_digest_claiming_another_journal_of_the_same_size_fails(tmp_path: Path) -> None:
    run = recorded(tmp_path)
    digest = RunDigest.load(run / DIGEST_NAME)
    stamp = digest.meta.journal.model_copy(update={"sha256": "0" * 64})
    meta = digest.meta.model_copy(update={"journal": stamp})
    (run / DIGEST_NAME).write_bytes(dataclasses.replace(digest, meta=meta).save())
    (problem,) = verify_run(run).problems
    assert "at the same size: one of the two was altered" in problem


def test_an_unreadable_digest_fails(tmp_path: Path) -> None:
    run = recorded(tmp_path)
    (run / DIGEST_NAME).write_bytes(b"garbage")
    (problem,) = verify_run(run).problems
    assert "unreadable digest" in problem


def test_a_missing_digest_is_a_note(tmp_path: Path) -> None:
    run = recorded(tmp_path)
    (run / DIGEST_NAME).unlink()
    verification = verify_run(run)
    assert verification.intact
    assert any("no digest" in note for note in verification.notes)


def test_a_stale_digest_is_a_note(tmp_path: Path) -> None:
    run = recorded(tmp_path)
    writer = RunWriter.resume(run)
    writer.record(result(writer, "ff", ROW, O.PASSED, minute=9))
    writer.close()
    verification = verify_run(run)
    assert verification.intact, verification.problems
    assert any("stale" in note and DIGEST_NAME in note for note in verification.notes)
    assert np.array_equal(RunDigest.load(run / DIGEST_NAME).versions, [1, 1])
