"""Judging a cancel point (pure: no I/O): a request held at a point of its life and cancelled
there by its client (``cancel_points`` drives it).

- The point was reached: the hold fired. A hold that never fires means the release has no hook
  that is reached at that point on this row: the case is invalid with that reason, never passed.
- The cancel landed while the request was held: a sync client disconnected before any answer; a
  job was DELETEd before it ended. Anything else did not cancel at the point: invalid.
- Nothing of the request is left: a job is gone (404) or ended ``cancelled``/``failed``, never
  ``completed``, one terminal state at most, its content never served; no request is counted
  running or waiting on ``/metrics`` once the case is over (a row without those gauges cannot
  tell: invalid, never read as none left).
- A request cancelled while queued never runs, in any execution mode: the tripwire armed on it
  after its cancel must never fire.
"""

from omniqual.checks.fault_injection.cases import FaultCase
from omniqual.checks.fault_injection.jobs import TERMINAL, UNFINISHED, JobSeen
from omniqual.checks.fault_injection.judge import Seen, Verdict
from omniqual.domain.fault_injection import FaultRecord


def judge_reached(case: FaultCase, fired: FaultRecord | None, verdict: Verdict) -> bool:
    if fired is not None:
        return True
    held = "the peer it queues behind" if case.queued else "the request"
    verdict.invalid.append(
        f"the hold of {held} {case.point} never fired: this release has no hook reached at that "
        f"point on this row ({case.stage.value} hook), so the point was not cancelled at")
    return False


def judge_cut(case: FaultCase, seen: Seen, verdict: Verdict) -> None:
    """A sync request: its client disconnected while it was held (queued)."""
    if seen.kind != "cut":
        verdict.invalid.append(f"the request was not cancelled {case.point}: {seen.text()} "
                               "before its client cancelled it")  # fmt: skip


def judge_cancelled_job(case: FaultCase, job: JobSeen, verdict: Verdict) -> None:
    """A job DELETEd while held (queued): gone or ended without completing, nothing served."""
    if job.job_id is None:
        verdict.invalid.append(f"no job to cancel {case.point}: create {job.create.text()}")
        return
    if job.terminal_before_cancel:
        verdict.invalid.append(f"the job ended ({job.terminal_before_cancel}) before its "
                               f"cancel {case.point}")  # fmt: skip
        return
    if len(job.terminals) > 1:
        verdict.failures.append(f"the cancelled job reported two terminal states "
                                f"({' then '.join(job.terminals)})")  # fmt: skip
    if job.content_ok:
        verdict.failures.append(f"the job cancelled {case.point} served its content (HTTP "
                                f"{job.content_status}) after the cancel ({job.cancel})")
    if "completed" in job.terminals:
        verdict.failures.append(f"the job cancelled {case.point} completed after the cancel "
                                f"({job.cancel})")  # fmt: skip
    elif job.lost:
        verdict.failures.append(f"the server stopped answering while the cancelled job was "
                                f"followed ({job.lost})")  # fmt: skip
    elif job.last in UNFINISHED:
        verdict.failures.append(f"the job cancelled {case.point} stayed {job.last} after the "
                                f"cancel ({job.cancel}): a leaked job")  # fmt: skip
    elif job.last not in (*TERMINAL, "gone"):
        verdict.failures.append(f"the cancel was not honoured: the job answers {job.last} "
                                f"({job.cancel})")  # fmt: skip


def judge_ran(ran: FaultRecord | None, verdict: Verdict) -> None:
    """The tripwire on a request cancelled while queued: it must never fire."""
    if ran is not None:
        step = "" if ran.step is None else f" step {ran.step}"
        verdict.failures.append(
            f"the request cancelled while queued ran after its cancel (its denoise{step} "
            f"reached {ran.where or 'a hooked point'}): queued work must never run")


def judge_left(left: float | None, settle_s: float, verdict: Verdict) -> str:
    """Requests the server still counts running or waiting after the case (None: no gauges)."""
    if left is None:
        verdict.invalid.append("/metrics carries no vllm_omni:num_requests_running/waiting "
                               "gauges: whether the cancelled request left the server is "
                               "unknown")  # fmt: skip
        return "requests left unknown"
    if left > 0:
        verdict.failures.append(f"{left:g} request(s) still counted running or waiting "
                                f"{settle_s:g} s after the case: the cancelled request was not "
                                "removed")  # fmt: skip
    return f"{left:g} request(s) left"
