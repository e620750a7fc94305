"""The digest records the journal's chain head (the sha256 of its last record's line) and the
sha256 of the whole journal; compile trusts a stored digest only while the whole journal still
hashes to it: size, tail and head alone do not see an edit early in a long final record, nor one
in the middle of the journal."""

import dataclasses
import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from omniqual.compile.collect import collect_digests
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.result import GateResult
from omniqual.evidence.digest_files import current_digest, load_current
from omniqual.evidence.run_digest import DIGEST_NAME, TAIL_BYTES, RunDigest
from omniqual.evidence.store import RunWriter, StoreError
from omniqual.evidence.verify import verify_run

MakeResult = Callable[..., GateResult]


def last_line(run: Path) -> bytes:
    return (run / "journal.jsonl").read_bytes().splitlines(keepends=True)[-1]


def long_last_record(writer: RunWriter, make_result: MakeResult) -> Path:
    """A killed run whose last record is longer than the tail compile hashes, its outcome
    written before the long part (keys are sorted: "outcome" < "reasons")."""
    writer.record(make_result("r1", "res-1"))
    long = make_result("r1", "res-2").model_copy(update={"reasons": ("x" * TAIL_BYTES,)})
    writer.record(long)
    writer.close()
    run = writer.run_dir
    line = last_line(run)
    assert len(line) - line.index(b'"outcome":"passed"') > TAIL_BYTES
    return run


def test_the_digest_records_the_journal_chain_head(
    writer: RunWriter, make_result: MakeResult
) -> None:
    writer.record(make_result("r1", "res-1"))
    writer.finish("completed")
    digest = RunDigest.load(writer.run_dir / DIGEST_NAME)
    head = hashlib.sha256(last_line(writer.run_dir)).hexdigest()
    assert digest.meta.journal.head_sha256 == head


def test_a_digest_is_not_trusted_and_compile_refuses_once_the_last_record_was_altered(
    writer: RunWriter, make_result: MakeResult, tmp_path: Path
) -> None:
    run = long_last_record(writer, make_result)
    assert current_digest(run).results()[-1].outcome is GateOutcome.PASSED  # built and cached
    assert load_current(run) is not None
    journal = run / "journal.jsonl"
    data = journal.read_bytes()
    at = data.rindex(b'"outcome":"passed"')
    journal.write_bytes(data[:at] + b'"outcome":"failed"' + data[at + 18 :])  # same size, tail
    assert load_current(run) is None
    # The line both the anchor and the cached digest end on was altered: damage, not staleness.
    with pytest.raises(StoreError, match=r"journal\.jsonl:3: the line ending at byte .* altered"):
        collect_digests([run], tmp_path)
    cached = RunDigest.load(run / DIGEST_NAME)
    assert cached.results()[-1].outcome is GateOutcome.PASSED  # not rebuilt over the damage


def test_verify_names_a_digest_recording_another_chain_head(
    writer: RunWriter, make_result: MakeResult
) -> None:
    writer.record(make_result("r1", "res-1"))
    writer.finish("completed")
    run = writer.run_dir
    digest = RunDigest.load(run / DIGEST_NAME)
    stamp = digest.meta.journal.model_copy(update={"head_sha256": "f" * 64})
    meta = digest.meta.model_copy(update={"journal": stamp})
    (run / DIGEST_NAME).write_bytes(dataclasses.replace(digest, meta=meta).save())
    assert load_current(run) is None
    (problem,) = verify_run(run).problems
    assert "chain head ffffffffffff…" in problem


def test_compile_does_not_trust_a_digest_of_a_journal_edited_in_its_middle_at_the_same_size(
    writer: RunWriter, make_result: MakeResult, tmp_path: Path
) -> None:
    """Size, tail and chain head all unchanged: only the whole journal's hash tells."""
    writer.record(make_result("r1", "res-1"))
    writer.record(make_result("r1", "res-2").model_copy(update={"reasons": ("x" * TAIL_BYTES,)}))
    writer.record(make_result("r1", "res-3"))
    writer.finish("completed")
    run = writer.run_dir
    assert load_current(run) is not None
    journal = run / "journal.jsonl"
    data = journal.read_bytes()
    at = data.index(b'"outcome":"passed"')  # res-1's, well before the tail
    assert len(data) - at > TAIL_BYTES
    journal.write_bytes(data[:at] + b'"outcome":"failed"' + data[at + 18 :])
    assert last_line(run) == data.splitlines(keepends=True)[-1]
    assert load_current(run) is None
    (located,) = collect_digests([run], tmp_path)
    assert located.digest.results()[0].outcome is GateOutcome.FAILED
