"""The abort gate's cases. Sync endpoints: client disconnects while queued and early/middle/late in
denoising, a burst of them, and a client-side timeout. Async video jobs: DELETE right after
creation, while queued behind another job, early/middle/late, twice, and after completion, plus
a known-good job polled past its terminal state. After every cut the server's work is watched
(``work``: its /metrics gauges and execution count, its CPU time against an idle baseline) and
held to the row's abort boundary; then ``/health`` within a deadline and the same request again
(its extra latency over the solo run is kept as a supplementary note)."""

import asyncio
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from omniqual.checks.abort.bounds import judge_cut
from omniqual.checks.abort.params import AbortParams
from omniqual.checks.abort.peer_runs import judge_peer, record_peer
from omniqual.checks.abort.peer_truth import PEER_SEED, PeerTruth, outputs_of
from omniqual.checks.abort.work import (
    Boundary,
    WorkBaseline,
    WorkMeter,
    WorkReading,
    WorkWindow,
)
from omniqual.checks.load_binding import PATH_OF, JobTrace, WireCall, usable_output
from omniqual.client import NO_JSON, ClientError, OmniClient, RawResponse, TargetTimeout
from omniqual.domain.evidence import CaseResult
from omniqual.domain.outcomes import GateOutcome
from omniqual.loadgen.workload import EndpointKind


@dataclass(slots=True)
class Case:
    id: str
    endpoint: str
    sent: str
    expected: str
    observed: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    limitations: list[str] = field(default_factory=list)
    extra_latency_s: float | None = None
    ran_on_s: float | None = None
    """Seconds of service the server spent on the cut work after the cut (measured)."""

    def fail(self, text: str) -> None:
        self.failures.append(f"{self.id}: {text}")

    def result(self) -> CaseResult:
        outcome = GateOutcome.FAILED if self.failures else (
            GateOutcome.INVALID if self.invalid else GateOutcome.PASSED)  # fmt: skip
        note = "; ".join([*self.failures, *self.invalid, *self.limitations, *self.notes])
        return CaseResult(id=self.id, endpoint=self.endpoint, sent=self.sent,
                          expected_status=self.expected, observed_status=", ".join(self.observed),
                          outcome=outcome, note=note[:600])  # fmt: skip


class AbortDriver:
    """Runs cases against one server with one calibrated request (``make_call`` builds it,
    with a fresh seed each time so no cache can answer it)."""

    def __init__(self, client: OmniClient, side: OmniClient, params: AbortParams,
                 endpoint: EndpointKind, calls: "CallFactory", solo_s: float) -> None:  # fmt: skip
        self.client, self.side, self.params = client, side, params
        self.endpoint, self.calls, self.solo_s = endpoint, calls, solo_s
        self.path = PATH_OF[endpoint]
        self.meter: WorkMeter | None = None
        self.work_base: WorkBaseline | None = None
        self.boundary = Boundary.REQUEST
        self.work_log: list[dict[str, object]] = []
        """Per judged cut: the raw window figures behind the verdict (for the summary)."""
        self.job_log: list[dict[str, object]] = []
        """Per cancelled job checked afterwards: what the server showed (for the report)."""
        self.execution: str | None = None
        self.peer: PeerTruth | None = None
        """The solo same-seed output of the peer a queued cut waits behind (``record_peer``)."""

    async def reading(self) -> WorkReading | None:
        return None if self.meter is None else await self.meter.read()

    async def judge_work(self, case: Case, *, queued: bool, window_s: float, left_s: float,
                         before: WorkReading | None, peers: int = 0) -> None:  # fmt: skip
        """Watch the server for ``window_s`` from now and hold the cut to its boundary.
        ``before`` (taken before the case sent anything) counts finished executions beyond the
        ``peers`` the case itself completed; ``left_s`` is the service the cut request had left."""
        if self.meter is None or self.work_base is None:
            return
        start = await self.meter.read()
        window = await self.meter.watch(window_s, start)
        self.hold(case, window, start, queued=queued, left_s=left_s, before=before, peers=peers)

    def hold(self, case: Case, window: WorkWindow, start: WorkReading, *, queued: bool,
             left_s: float, before: WorkReading | None, peers: int = 0,
             shared_s: float = 0.0) -> None:  # fmt: skip
        """Judge one watched window (opened at ``start``); ``shared_s`` of it was a peer's."""
        assert self.work_base is not None
        end_exec = None if window.executions is None or start.executions is None else (
            start.executions + window.executions)  # fmt: skip
        extra = None
        if before is not None and before.executions is not None and end_exec is not None:
            extra = end_exec - before.executions - peers
        p = self.params
        verdict = judge_cut(queued, window, self.work_base, self.boundary,
                            max_steps_after_cut=p.max_steps_after_cut,
                            max_queued_work_x_service=p.max_queued_work_x_service,
                            left_s=left_s, extra_executions=extra, shared_s=shared_s,
                            gauges_prove_stop=p.gauges_prove_stop)  # fmt: skip
        case.ran_on_s = verdict.ran_on_s
        self.work_log.append({"case": case.id, "queued": queued, **asdict(window),
                              "extra_executions": extra, "ran_on_s": verdict.ran_on_s,
                              "allowed_s": verdict.allowed_s, "noise_s": verdict.noise_s,
                              "left_s": left_s, "shared_s": shared_s})  # fmt: skip
        if verdict.ran_on_s is not None:
            case.observed.append(f"work after cut {verdict.ran_on_s:.3f} s")
        if verdict.failure is not None:
            case.fail(verdict.failure)
        if verdict.limitation is not None:
            case.limitations.append(f"{case.id}: {verdict.limitation}")
        if verdict.invalid is not None:
            case.invalid.append(f"{case.id}: {verdict.invalid}")

    async def send(self, call: WireCall, timeout_s: float | None = None) -> RawResponse:
        return await self.client.send_raw(
            call.method, call.path, json=NO_JSON if call.json is None else call.json,
            data=call.data, files=list(call.files) or None,
            timeout_s=timeout_s or self.params.request_timeout_s,
        )  # fmt: skip

    # ------------------------------------------------------------------ after every case

    async def after(self, case: Case, remaining_s: float | None) -> None:
        """Health within its deadline, then the same request again (must succeed)."""
        try:
            health = await self.side.send_raw("GET", "/health",
                                              timeout_s=self.params.health_timeout_s)  # fmt: skip
            case.observed.append(f"health {health.status}")
            if health.status != 200:
                case.fail(f"GET /health answered {health.status} after the case")
        except ClientError as exc:
            case.observed.append("health: no answer")
            case.fail(f"GET /health gave no answer within {self.params.health_timeout_s:g} s "
                      f"after the case ({type(exc).__name__}): the server hangs")  # fmt: skip
            return
        started = time.perf_counter()
        ok, what = await self.complete_one()
        latency = time.perf_counter() - started
        case.observed.append(f"next {what}")
        if not ok:
            case.fail(f"the next known-good request failed: {what}")
            return
        case.extra_latency_s = latency - self.solo_s
        if remaining_s is not None and remaining_s > 0.05:
            # A supplementary figure only: one latency on a shared host proves nothing either
            # way; whether the cut work ran on is measured on the server (``judge_work``).
            case.notes.append(
                f"next request {latency:.2f} s vs solo {self.solo_s:.2f} s "
                f"({case.extra_latency_s:+.2f} s; cut work left ~{remaining_s:.2f} s)")

    async def complete_one(self) -> tuple[bool, str]:
        """Send the calibrated request to completion; (succeeded, short description)."""
        try:
            if self.endpoint is EndpointKind.VIDEO_ASYNC:
                trace = await self.create_job()
                if trace is None:
                    return False, "job creation failed"
                await self.follow(trace, settle_polls=1)
                terminals = trace.terminal_states
                if len(terminals) > 1:
                    return False, (f"job {trace.job_id} reported two terminal states "
                                   f"({' then '.join(terminals)})")  # fmt: skip
                return (terminals == ("completed",) and trace.content_status == 200,
                        f"job {'/'.join(terminals) or 'unfinished'}, content "
                        f"{trace.content_status}")  # fmt: skip
            raw = await self.send(self.calls.next())
            return usable_output(self.endpoint, raw), f"HTTP {raw.status}"
        except ClientError as exc:
            return False, type(exc).__name__

    # ------------------------------------------------------------------ sync endpoints

    async def cut(self, case: Case, after_s: float, *, last: bool = True) -> bool | float:
        """Send and disconnect after ``after_s``; True when the cut happened mid-request.
        Answered usably before the cut, in at least half the calibrated solo time (a run that
        was short, not some other answer): how long it took, recorded as invalid only on the
        ``last`` try (an earlier one is tried again). Any other answer: invalid, False."""
        call = self.calls.next()
        outcome = await self.client.send_and_disconnect(
            call.method, call.path, after_s=after_s,
            json=NO_JSON if call.json is None else call.json, data=call.data,
            files=list(call.files) or None,
        )  # fmt: skip
        if outcome.answered:
            case.observed.append(f"answered {outcome.status} in {outcome.elapsed_s:.3f} s, "
                                 f"before the cut at {after_s:.3f} s")  # fmt: skip
            short_run = outcome.status is not None and 200 <= outcome.status < 300 and (
                outcome.elapsed_s >= 0.5 * self.solo_s
            )
            if last or not short_run:
                case.invalid.append(
                    f"{case.id}: answered (HTTP {outcome.status}) before the cut at "
                    f"{after_s:.3f} s; the cut point was not reached"
                )
            return outcome.elapsed_s if short_run and not last else False
        case.observed.append(f"cut at {outcome.elapsed_s:.3f} s")
        return True

    async def cut_behind_blocker(self, case: Case) -> None:
        """A peer request occupies the worker; the cut one waits queued and is dropped there.
        The peer must still complete with its solo same-seed output (``record_peer``)."""
        blocker = asyncio.create_task(self.send(self.calls.at(PEER_SEED)))
        await asyncio.sleep(min(0.1, 0.2 * self.solo_s))
        await self.cut(case, after_s=min(0.1, 0.2 * self.solo_s))
        try:
            raw = await blocker
            case.observed.append(f"peer {raw.status}")
            if not usable_output(self.endpoint, raw):
                case.fail(f"the peer request failed (HTTP {raw.status}) after a queued cut")
            else:
                judge_peer(self, case, outputs_of(self.endpoint, raw))
        except ClientError as exc:
            case.fail(f"the peer request failed after a queued cut: {type(exc).__name__}")

    async def record_peer(self, case: Case) -> None:
        """The peer's solo same-seed output, before the queued cut's work reading (its two solo
        runs must not count as executions after the cut)."""
        await record_peer(self, case)

    async def client_timeout(self, case: Case, after_s: float) -> bool:
        """True when the client gave up mid-request (the cut happened)."""
        try:
            raw = await self.send(self.calls.next(), timeout_s=after_s)
        except TargetTimeout:
            case.observed.append(f"client timeout at {after_s:.3f} s")
            return True
        except ClientError as exc:
            case.fail(f"expected a client-side timeout, got {type(exc).__name__}")
            return False
        case.observed.append(f"answered {raw.status}")
        case.invalid.append(f"{case.id}: answered before the {after_s:.3f} s client timeout")
        return False

    # ------------------------------------------------------------------ async video jobs

    async def create_job(self, call: WireCall | None = None) -> JobTrace | None:
        raw = await self.send(call or self.calls.next())
        try:
            doc: Any = raw.json() if raw.ok else None
        except ClientError:
            doc = None
        if not isinstance(doc, dict) or not doc.get("id"):
            return None
        return JobTrace(0, str(doc["id"]), [str(doc.get("status", ""))])

    async def follow(self, trace: JobTrace, *, settle_polls: int) -> None:
        deadline = time.monotonic() + self.params.request_timeout_s
        after_terminal = -1
        unfinished_at = time.monotonic()
        while after_terminal < settle_polls and time.monotonic() < deadline:
            asked = time.monotonic()
            raw = await self.client.send_raw("GET", f"/v1/videos/{trace.job_id}")
            trace.statuses.append(_status(raw))
            if trace.statuses[-1] in ("completed", "failed", "cancelled"):
                if after_terminal < 0:  # it ended between the last two polls
                    trace.ended_about = (unfinished_at + asked) / 2
                after_terminal += 1
            else:
                unfinished_at = asked
            await asyncio.sleep(self.params.poll_interval_s)
        if "completed" in trace.terminal_states:
            content = await self.client.send_raw("GET", f"/v1/videos/{trace.job_id}/content")
            trace.content_status = content.status

    async def job_status(self, trace: JobTrace) -> str:
        """The job's status now, read just before a DELETE: whether the cut can still land."""
        raw = await self.client.send_raw("GET", f"/v1/videos/{trace.job_id}")
        return "gone (404)" if raw.status == 404 else _status(raw)

    async def discard(self, trace: JobTrace) -> None:
        """Remove a job that finished before its cut: an attempt that tested nothing."""
        await self.client.send_raw("DELETE", f"/v1/videos/{trace.job_id}")

    async def delete(self, case: Case, trace: JobTrace, label: str = "DELETE") -> int:
        raw = await self.client.send_raw("DELETE", f"/v1/videos/{trace.job_id}")
        case.observed.append(f"{label} {raw.status}")
        trace.cancelled, trace.delete_status = True, raw.status
        return raw.status

    async def verify_cancelled(self, case: Case, trace: JobTrace) -> None:
        """After the job had time to finish anyway: gone or terminally not completed, no
        content, not listed as unfinished."""
        await asyncio.sleep(self.params.cancel_recheck_x_service * self.solo_s)
        raw = await self.client.send_raw("GET", f"/v1/videos/{trace.job_id}")
        status = "gone (404)" if raw.status == 404 else _status(raw)
        case.observed.append(f"after: {status}")
        if raw.status != 404:
            trace.statuses.append(_status(raw))
        content = await self.client.send_raw("GET", f"/v1/videos/{trace.job_id}/content")
        trace.content_status = content.status
        case.observed.append(f"content {content.status}")
        if content.status == 200:
            case.fail(f"job {trace.job_id} served content (HTTP 200) after DELETE answered "
                      f"{trace.delete_status}: cancellation ignored")  # fmt: skip
        elif "completed" in trace.terminal_states:
            case.fail(f"job {trace.job_id} reached 'completed' after DELETE")
        if len(trace.terminal_states) > 1:
            case.fail(f"job {trace.job_id} reported terminal states "
                      f"{' then '.join(trace.terminal_states)}; expected exactly one")
        listed = await self.client.send_raw("GET", "/v1/videos", params={"limit": 100})
        jobs = listed.json().get("data", []) if listed.ok else []
        still_listed = False
        for job in jobs:
            if job.get("id") == trace.job_id and job.get("status") in ("queued", "in_progress"):
                still_listed = True
                case.fail(f"job {trace.job_id} is still listed as {job.get('status')} after DELETE")
        self.job_log.append({"case": case.id, "delete_status": trace.delete_status,
                             "after": status, "content_status": content.status,
                             "terminal_states": list(trace.terminal_states),
                             "still_listed": still_listed})  # fmt: skip


def _status(raw: RawResponse) -> str:
    try:
        doc = raw.json()
    except ClientError:
        return f"http_{raw.status}"
    return str(doc.get("status", f"http_{raw.status}")) if isinstance(doc, dict) else "?"


class CallFactory:
    """Builds the calibrated request with a new seed each time."""

    def __init__(self, build: Any) -> None:
        self._build = build
        self._seed = 5000

    def next(self) -> WireCall:
        self._seed += 1
        return self.at(self._seed)

    def at(self, seed: int) -> WireCall:
        """The request with ``seed`` (a peer's, served alone and beside a cut alike)."""
        call: WireCall = self._build(seed)
        return call
