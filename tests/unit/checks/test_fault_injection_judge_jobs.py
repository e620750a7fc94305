"""The async job judgement on what clients saw (pure): where the worker ends, peers the server
took down with it are stated, a peer left queued on a live server is a leak, and a cancelled job
that completes anyway fails."""

from omniqual.checks.fault_injection.cases import CASES
from omniqual.checks.fault_injection.jobs import JobSeen
from omniqual.checks.fault_injection.judge import Seen, Verdict
from omniqual.checks.fault_injection.judge_jobs import judge_faulted_job, judge_peer_jobs

CREATED = Seen("answer", 0.1, 200, usable=True)


def test_peers_lost_with_an_exiting_worker_are_stated_but_a_queued_one_leaks() -> None:
    lost = JobSeen(CREATED, "v1", ("queued",), lost="TargetUnreachable")
    stuck = JobSeen(CREATED, "v2", ("queued", "queued"))
    v = Verdict()
    line = judge_peer_jobs(CASES["worker-exit"], [lost, stuck], v)
    assert line.startswith("peer jobs 0/2 completed")
    assert v.failures == ["a peer job stayed queued (a leaked job)"]
    v = Verdict()
    judge_peer_jobs(CASES["encode-raise"], [lost], v)  # a request-level fault: no excuse
    assert len(v.failures) == 1 and "must not take its peers down" in v.failures[0]


def test_a_cancelled_job_that_completes_anyway_fails() -> None:
    job = JobSeen(CREATED, "v1", ("queued", "in_progress", "completed", "completed"),
                  cancel="DELETE HTTP 200 at 3.00 s", content_status=200, content_ok=True)
    v = Verdict()
    judge_faulted_job(CASES["denoise-hang"], job, True, 30.0, v)
    assert any("completed after the client cancelled it" in f for f in v.failures)
    assert any("content was served as a success" in f for f in v.failures)


def test_a_faulted_job_failed_without_an_error_or_never_fired_is_judged() -> None:
    silent = JobSeen(CREATED, "v1", ("queued", "failed", "failed"), content_status=422)
    v = Verdict()
    judge_faulted_job(CASES["decode-raise"], silent, True, 30.0, v)
    assert v.failures == ["the faulted job failed without a stated error"]
    v = Verdict()
    judge_faulted_job(CASES["decode-raise"], silent, False, 30.0, v)
    assert v.invalid and not v.failures
