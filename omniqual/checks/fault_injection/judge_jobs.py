"""Judging one fault-injection case run through the async job API (pure: no I/O).

- The faulted job: it reaches ``failed`` with a stated error within the deadline, exactly one
  terminal state, and its content is never served as a success. Staying queued/in progress past
  the deadline is a leaked job; ``completed`` is an error reported as success. A create refused
  with a 5xx error envelope is a terminal error too; where the worker ends, a server that stops
  answering while the job is followed is one.
- A cancelled job (a hang: the client's deadline; ``late-after-cancel``) must be gone (404) or
  end ``cancelled``/``failed`` after the DELETE, never ``completed``, its content never served.
- Peer jobs: each completed with content, or failed with a stated error; the line says which.
  Where the fault stays inside one job, a peer that fails was taken down by another's fault;
  where it ends the worker, a server that stops answering while a peer is followed is stated.
- The listing after the case shows no job of the case queued or in progress (a leaked job).
"""

from omniqual.checks.fault_injection.cases import FaultCase
from omniqual.checks.fault_injection.jobs import TERMINAL, UNFINISHED, JobSeen
from omniqual.checks.fault_injection.judge import Verdict


def judge_faulted_job(case: FaultCase, job: JobSeen, fired: bool, deadline_s: float,
                      verdict: Verdict) -> None:  # fmt: skip
    if not fired:
        verdict.invalid.append("the fault never fired: its hook was not reached")
        return
    if job.job_id is None:
        _judge_refused(case, job, verdict)
        return
    if len(job.terminals) > 1:
        verdict.failures.append(f"the faulted job reported two terminal states "
                                f"({' then '.join(job.terminals)})")  # fmt: skip
    if job.content_ok:
        verdict.failures.append(f"the faulted job's content was served as a success (HTTP "
                                f"{job.content_status}): an error answered as success")
    if job.cancel or job.terminal_before_cancel:
        _judge_cancelled(case, job, verdict)
        return
    if job.lost and case.ends_worker:
        verdict.notes.append(f"the server stopped answering while the job was followed "
                             f"({job.lost})")  # fmt: skip
        return
    if job.last in UNFINISHED or job.lost:
        verdict.failures.append(f"the faulted job stayed {job.last} past the {deadline_s:g} s "
                                "deadline: a leaked job (never reached a terminal state)")
        return
    if "completed" in job.terminals:
        verdict.failures.append("the faulted job was reported `completed`: an error reported "
                                "as success")  # fmt: skip
    elif job.last == "gone":
        verdict.failures.append("the faulted job vanished (404) without a terminal state")
    elif job.last != "failed":
        verdict.failures.append(f"the faulted job ended `{job.last}`, not `failed`")
    elif not job.error:
        verdict.failures.append("the faulted job failed without a stated error")


def _judge_refused(case: FaultCase, job: JobSeen, verdict: Verdict) -> None:
    seen = job.create
    if seen.kind == "dropped" and case.ends_worker:
        verdict.notes.append("the faulted job's create was closed unanswered")
    elif seen.kind == "answer" and (seen.status or 0) >= 500 and seen.enveloped:
        verdict.notes.append(f"the faulted job was refused at create ({seen.text()})")
    else:
        verdict.failures.append(f"the faulted job was not created, without a 5xx error: "
                                f"{seen.text()}")  # fmt: skip


def _judge_cancelled(case: FaultCase, job: JobSeen, verdict: Verdict) -> None:
    if job.terminal_before_cancel:
        if case.cancel:
            verdict.invalid.append(f"the job ended ({job.terminal_before_cancel}) before the "
                                   "client could cancel it before the fault")  # fmt: skip
        elif job.terminal_before_cancel == "completed":
            verdict.failures.append("the hung job was reported `completed` within the client's "
                                    "deadline: the hang never held it")  # fmt: skip
        return
    if job.lost and case.ends_worker:
        return
    if "completed" in job.terminals:
        verdict.failures.append(f"the job completed after the client cancelled it ({job.cancel})")
    elif job.last in UNFINISHED or job.lost:
        verdict.failures.append(f"the cancelled job stayed {job.last} ({job.cancel}): a leaked "
                                "job")  # fmt: skip
    elif job.last not in (*TERMINAL, "gone"):
        verdict.failures.append(f"the cancel was not honoured: the job answers {job.last} "
                                f"({job.cancel})")  # fmt: skip


def judge_peer_jobs(case: FaultCase, peers: list[JobSeen], verdict: Verdict) -> str:
    """One line on the peer jobs; failures where they should have completed."""
    ok = [p for p in peers if p.content_ok and p.terminals == ("completed",)]
    failed = [p for p in peers if p not in ok]
    line = f"peer jobs {len(ok)}/{len(peers)} completed" + (
        "; others: " + " | ".join(p.text() for p in failed) if failed else "")  # fmt: skip
    for peer in failed:
        if peer.job_id is not None and "completed" in peer.terminals:
            verdict.failures.append(f"a peer job completed without its content served "
                                    f"({peer.text()})")  # fmt: skip
        elif not case.ends_worker:
            verdict.failures.append(f"a peer job did not complete ({peer.text()}) from another "
                                    f"job's {case.stage.value} fault: a request-level fault must "
                                    "not take its peers down")  # fmt: skip
        elif peer.job_id is None:
            seen = peer.create
            if seen.kind == "answer" and not (seen.enveloped and (seen.status or 0) >= 400):
                verdict.failures.append(f"a peer job was refused without a stated error "
                                        f"({seen.text()})")  # fmt: skip
        elif peer.lost:
            continue  # the worker's end took the server down while the job was followed
        elif peer.last in UNFINISHED:
            verdict.failures.append(f"a peer job stayed {peer.last} (a leaked job)")
        elif peer.last == "failed" and not peer.error:
            verdict.failures.append("a peer job failed without a stated error")
    return line


def judge_listing(unfinished: list[str] | str, verdict: Verdict) -> str:
    """The listing after the case: a reason (it could not be read) is a note, not a pass."""
    if isinstance(unfinished, str):
        verdict.notes.append(f"{unfinished}: leaked jobs judged from the polls alone")
        return "listing unread"
    if unfinished:
        verdict.failures.append(f"the job listing after the case still shows {len(unfinished)} "
                                f"job(s) of the case unfinished: {', '.join(unfinished[:4])} "
                                "(leaked jobs)")  # fmt: skip
    return f"listing: {len(unfinished)} unfinished job(s) of the case"
