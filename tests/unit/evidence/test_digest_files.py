"""The columnar run digest: written at run end, equal to what the journal says, rebuilt when
missing, stale or unreadable."""

from pathlib import Path

from omniqual.domain.outcomes import GateOutcome as O
from omniqual.domain.provenance import Provenance
from omniqual.evidence.digest import iter_digests
from omniqual.evidence.digest_files import current_digest, load_current
from omniqual.evidence.run_digest import DIGEST_NAME, RunDigest
from omniqual.evidence.store import RunWriter
from tests.fakes.evidence import FINGERPRINT, record_run, result

ROW = "model=m;task=t2i;quantization=none;hardware=cpu"


def test_a_finished_run_has_a_digest_equal_to_its_journal(tmp_path: Path) -> None:
    run = record_run(tmp_path, [("contract", ROW, O.PASSED), ("load", ROW, O.FAILED),
                                ("ff", "another=row", O.ERRORED)])  # fmt: skip
    assert (run / DIGEST_NAME).is_file()
    stored = load_current(run)
    assert stored is not None
    assert stored.results() == list(iter_digests(run))


def test_round_trip_keeps_every_field_compile_reads(tmp_path: Path) -> None:
    with RunWriter.create(tmp_path, command=("omniqual",), environment=FINGERPRINT) as writer:
        base = result(writer, "contract", ROW, O.FAILED, reasons=("a", "b", "c", "d"),
                      provenance=Provenance(checkpoint_sha256="c" * 64, vllm_omni_version="unknown",
                                            serve_config_sha256="s" * 64))  # fmt: skip
        writer.record(base.model_copy(update={
            "limitations": ("negative_prompt ignored",), "startup_only": True,
            "gate_spec_sha256": "", "gate_version": 7,
        }))  # fmt: skip
        writer.record(result(writer, "load", ROW, O.PASSED, with_artifact=False, minute=3))
    digest = RunDigest.load(writer.run_dir / DIGEST_NAME)
    journal = list(iter_digests(writer.run_dir))
    assert digest.results() == journal
    assert journal[0].reasons == ("a", "b", "c", "d") and journal[0].startup_only


def test_a_result_appended_after_the_digest_makes_it_stale_and_it_is_rebuilt(
    tmp_path: Path,
) -> None:
    run = record_run(tmp_path, [("contract", ROW, O.PASSED)])
    before = load_current(run)
    assert before is not None and len(before) == 1
    writer = RunWriter.resume(run)
    writer.record(result(writer, "load", ROW, O.FAILED, minute=5))
    writer.close()  # not finished: only a rebuild can know of the new result
    assert load_current(run) is None
    rebuilt = current_digest(run)
    assert [d.gate_id for d in rebuilt.results()] == ["contract", "load"]
    assert rebuilt.results() == list(iter_digests(run))
    cached = load_current(run)  # the rebuilt digest was stored
    assert cached is not None and len(cached) == 2


def test_an_unreadable_or_other_format_digest_is_rebuilt(tmp_path: Path) -> None:
    run = record_run(tmp_path, [("contract", ROW, O.PASSED)])
    (run / DIGEST_NAME).write_bytes(b"not a zip file")
    assert load_current(run) is None
    assert current_digest(run).results() == list(iter_digests(run))
    assert load_current(run) is not None


def test_a_journal_edited_in_place_near_its_end_makes_the_digest_stale(tmp_path: Path) -> None:
    run = record_run(tmp_path, [("contract", ROW, O.PASSED)])
    journal = run / "journal.jsonl"
    data = journal.read_bytes()
    journal.write_bytes(data.replace(b'"passed"', b'"failed"'))  # same size, other bytes
    assert load_current(run) is None
    assert current_digest(run).results()[0].outcome is O.FAILED


def test_each_result_keeps_the_host_of_its_session(tmp_path: Path) -> None:
    """A run resumed on another host: each result is measured on its own session's host, at
    run end as when rebuilt, and verify finds the digest agreeing with the journal."""
    from omniqual.domain.hardware import MeasuredOn
    from omniqual.domain.provenance import HARNESS_HOST, NOT_VISIBLE
    from omniqual.evidence.digest_files import check_digest, rebuild_digest
    from omniqual.evidence.run_reader import read_run

    here = Provenance(target_host=HARNESS_HOST)
    writer = RunWriter.create(tmp_path, command=("omniqual",), environment=FINGERPRINT)
    writer.record(result(writer, "contract", ROW, provenance=here))
    writer.record(result(writer, "load", ROW, provenance=Provenance(target_host=NOT_VISIBLE)))
    writer.close()  # unfinished: resumed below
    arm = FINGERPRINT.model_copy(update={"machine": "aarch64"})
    with RunWriter.resume(writer.run_dir, environment=arm) as resumed:
        resumed.record(result(resumed, "ff", ROW, minute=5, provenance=here))
    run = writer.run_dir
    hosts = [d.measured_on for d in RunDigest.load(run / DIGEST_NAME).results()]
    assert hosts == [MeasuredOn("x86_64", ()).encode(), None, MeasuredOn("aarch64", ()).encode()]
    assert [d.measured_on for d in iter_digests(run)] == hosts
    assert [d.measured_on for d in rebuild_digest(run).results()] == hosts
    contents = read_run(run)
    assert check_digest(run, contents.results, contents.result_hosts()) == ([], [])
