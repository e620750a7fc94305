"""The abort gate records its cleanup figures for the report (``effective["abort_cleanup"]``):
every judged cut with its window, and the resources before and after the settle. A leak shows
in the record as the growth it was failed for (in-process fake, no sockets)."""

from __future__ import annotations

from pathlib import Path

from omniqual.checks.abort.cleanup_record import abort_cleanup
from omniqual.checks.abort.params import AbortParams
from omniqual.checks.abort.work import WorkBaseline
from omniqual.checks.soak.watch import ResourcePoint
from omniqual.domain.abort_cleanup import AbortCleanup
from omniqual.domain.outcomes import GateOutcome
from tests.unit.checks.test_abort_faults import run


def test_record_keeps_each_cut_window_and_the_resources_around_the_settle() -> None:
    log = [{"case": "disconnect-middle", "queued": False, "seconds": 0.5, "cpu_s": 0.25,
            "busy_s": 0.1, "executions": 0.0, "steps": None, "extra_executions": 0.0,
            "ran_on_s": 0.12, "allowed_s": 0.4}]  # fmt: skip
    record = abort_cleanup(
        boundary="step", signals=["process-tree CPU time"],
        base=WorkBaseline(0.02, 0.9, 0.3, 4), work_log=log, source="process-tree",
        baseline=ResourcePoint(0.0, "process-tree", 100, 90, 10, 0),
        after=ResourcePoint(3.0, "process-tree", 120, 95, 11, 0), settle_s=0.6,
        params=AbortParams(),
    )  # fmt: skip
    cut = record.cuts[0]
    assert (cut.case, cut.window_s, cut.ran_on_s, cut.allowed_s) == ("disconnect-middle", 0.5,
                                                                      0.12, 0.4)  # fmt: skip
    assert cut.cpu_rate == 0.5 and record.idle_cpu_rate == 0.02
    assert (record.baseline.memory_bytes, record.after.memory_bytes) == (90, 95)  # PSS first
    assert record.bounds.memory_growth_mib == AbortParams().max_memory_growth_mib
    assert AbortCleanup.model_validate(record.model_dump(mode="json")) == record


def test_clean_run_records_every_judged_cut(tmp_path: Path) -> None:
    outcome, _ = run(tmp_path, "images-generations", "step/1")
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    record = AbortCleanup.model_validate(outcome.effective["abort_cleanup"])
    cases = {c.case for c in record.cuts}
    assert {"disconnect-queued", "disconnect-middle", "client-timeout"} <= cases
    measured = {m.name: m.value for m in outcome.measurements}
    by_case = {c.case: c for c in record.cuts}
    assert by_case["disconnect-middle"].ran_on_s is not None
    assert round(by_case["disconnect-middle"].ran_on_s, 4) == (
        measured["disconnect-middle.work_after_cut_s"])
    assert record.boundary == "step" and record.baseline.open_fds is not None
    assert record.settle_s is not None and record.settle_s >= 0


def test_a_leak_is_failed_and_its_growth_is_in_the_record(tmp_path: Path) -> None:
    outcome, _ = run(tmp_path, "images-generations", leaks_per_abort=True)
    assert outcome.outcome is GateOutcome.FAILED
    record = AbortCleanup.model_validate(outcome.effective["abort_cleanup"])
    assert record.after.temp_files is not None and record.baseline.temp_files is not None
    assert record.after.temp_files > record.baseline.temp_files


def test_video_cancellations_record_each_job_afterwards(tmp_path: Path) -> None:
    outcome, _ = run(tmp_path, "videos-async")
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    record = AbortCleanup.model_validate(outcome.effective["abort_cleanup"])
    by_case = {j.case: j for j in record.jobs}
    assert {"cancel-after-create", "cancel-queued", "cancel-middle", "cancel-twice"} <= set(by_case)
    middle = by_case["cancel-middle"]
    assert middle.delete_status is not None and 200 <= middle.delete_status < 300
    assert middle.content_status != 200 and not middle.still_listed


def test_ignored_cancellation_shows_in_the_job_record(tmp_path: Path) -> None:
    outcome, _ = run(tmp_path, "videos-async", ignores_cancellation=True)
    assert outcome.outcome is GateOutcome.FAILED
    record = AbortCleanup.model_validate(outcome.effective["abort_cleanup"])
    assert any(j.content_status == 200 or "completed" in j.terminal_states for j in record.jobs)
