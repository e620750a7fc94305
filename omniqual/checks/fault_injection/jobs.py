"""Fault-injection cases through the async job API (``videos-async``): the faulted request and
its peers are jobs (``POST /v1/videos``, polled with ``GET /v1/videos/{id}``, their content read
with ``GET /v1/videos/{id}/content``), and the job listing (``GET /v1/videos``) is read after
the case for jobs of the case left unfinished.

Where a sync client gives up (a hang: its deadline; ``late-after-cancel``: a disconnect), a job
client cancels: ``DELETE /v1/videos/{id}`` at the hang's client deadline, or as soon as the
injector records the late fault waiting after the result. A known-good job's output is its
content bytes; every job this driver made is deleted once it is judged.
"""

import asyncio
import hashlib
import time
from dataclasses import dataclass, field
from urllib.parse import quote

from omniqual.checks.fault_injection.cases import FaultCase
from omniqual.checks.fault_injection.driver import CaseDriver, seen_of
from omniqual.checks.fault_injection.judge import Seen
from omniqual.checks.fault_injection.kill import Kill
from omniqual.checks.load_binding import WireCall
from omniqual.client import NO_JSON, ClientError, OmniClient, RawResponse, TargetTimeout
from omniqual.domain.fault_injection import FaultArm, FaultMode

TERMINAL = ("completed", "failed", "cancelled")
UNFINISHED = ("queued", "in_progress")


@dataclass(frozen=True, slots=True)
class JobSeen:
    """What one job's client saw, from its create to its content."""

    create: Seen  # the POST's answer
    job_id: str | None = None  # None: no job was created
    statuses: tuple[str, ...] = ()  # every status polled, in order ("gone": a 404)
    error: str = ""  # the job's stated error message
    elapsed_s: float = 0.0  # from the create to the last poll
    content_status: int | None = None
    content_ok: bool = False  # the content was served as a success, with bytes
    lost: str = ""  # the server stopped answering while the job was followed
    cancel: str = ""  # the DELETE and its answer, where the client cancelled
    terminal_before_cancel: str = ""  # the job had ended (this state) before the DELETE
    digest: str | None = None  # sha256 of the content served as a success
    outputs: tuple[bytes, ...] = field(default=(), repr=False)  # that content, as its output

    @property
    def terminals(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s for s in self.statuses if s in TERMINAL))

    @property
    def last(self) -> str:
        return self.statuses[-1] if self.statuses else "none"

    def text(self) -> str:
        if self.job_id is None:
            return f"create: {self.create.text()}"
        path = " → ".join(dict.fromkeys(self.statuses)) or "never polled"
        parts = [f"job {path} in {self.elapsed_s:.2f} s"]
        if self.error:
            parts.append(f"error {self.error[:80]!r}")
        if self.cancel:
            parts.append(self.cancel)
        if self.content_status is not None:
            parts.append(f"content HTTP {self.content_status}")
        if self.lost:
            parts.append(f"lost ({self.lost})")
        return "; ".join(parts)


def _path(job_id: str, suffix: str = "") -> str:
    return f"/v1/videos/{quote(job_id, safe='')}{suffix}"


def _doc(raw: RawResponse) -> dict[str, object]:
    try:
        doc = raw.json()
    except ClientError:
        return {}
    return doc if isinstance(doc, dict) else {}


def _status(raw: RawResponse) -> tuple[str, str]:
    """(status, stated error) of a job answer; a 404 is "gone"."""
    if raw.status == 404:
        return "gone", ""
    doc = _doc(raw)
    error = doc.get("error")
    message = error.get("message") if isinstance(error, dict) else None
    return str(doc.get("status") or f"http_{raw.status}"), str(message or "")


class JobCaseDriver(CaseDriver):
    """``CaseDriver`` for a row whose requests are async jobs."""

    poll_s = 0.1

    async def create(self, call: WireCall, client: OmniClient) -> tuple[Seen, str | None, str]:
        """The POST's answer, the job's id (None: no job) and the status it was created in."""
        started = time.monotonic()
        try:
            raw = await client.send_raw(
                call.method, call.path, json=NO_JSON if call.json is None else call.json,
                data=call.data, files=list(call.files) or None,
                timeout_s=self.params.request_timeout_s)  # fmt: skip
        except TargetTimeout:
            return Seen("timeout", time.monotonic() - started), None, ""
        except ClientError as exc:
            return Seen("dropped", time.monotonic() - started, detail=type(exc).__name__), None, ""
        doc = _doc(raw) if raw.ok else {}
        job_id = doc.get("id")
        return (seen_of(self.kind, raw, time.monotonic() - started),
                str(job_id) if job_id else None, str(doc.get("status") or ""))  # fmt: skip

    async def run_job(self, call: WireCall, deadline_s: float, *, cancel_after_s: float | None
                      = None, cancel_on: FaultArm | None = None) -> JobSeen:  # fmt: skip
        """Create a job and follow it to its end (or cancel it), then read its content."""
        client = self.client
        started = time.monotonic()
        create, job_id, created = await self.create(call, client)
        if job_id is None:
            return JobSeen(create)
        statuses: list[str] = [created]
        error = cancel = before = lost = ""
        deadline = started + deadline_s
        try:
            if cancel_after_s is not None or cancel_on is not None:
                until = started + (cancel_after_s or deadline_s)
                while time.monotonic() < until and statuses[-1] not in TERMINAL:
                    if cancel_on is not None and await self.fired(cancel_on) is not None:
                        break
                    await asyncio.sleep(self.poll_s)
                    status, error = _status(await client.send_raw("GET", _path(job_id)))
                    statuses.append(status)
                if statuses[-1] in TERMINAL:
                    before = statuses[-1]
                else:
                    deleted = await client.send_raw("DELETE", _path(job_id))
                    cancel = f"DELETE HTTP {deleted.status} at {time.monotonic() - started:.2f} s"
            settled = 0
            while settled < 2 and time.monotonic() < deadline:
                status, stated = _status(await client.send_raw("GET", _path(job_id)))
                statuses.append(status)
                error = stated or error
                settled += status in (*TERMINAL, "gone")  # one more poll after the end
                if settled < 2:
                    await asyncio.sleep(self.poll_s)
            content = await client.send_raw("GET", _path(job_id, "/content"))
        except ClientError as exc:
            lost = type(exc).__name__
            return JobSeen(create, job_id, tuple(statuses), error, time.monotonic() - started,
                           lost=lost, cancel=cancel, terminal_before_cancel=before)  # fmt: skip
        served = content.ok and bool(content.body)
        return JobSeen(create, job_id, tuple(statuses), error, time.monotonic() - started,
                       content.status, served, cancel=cancel, terminal_before_cancel=before,
                       digest=hashlib.sha256(content.body).hexdigest() if served else None,
                       outputs=(content.body,) if served else ())  # fmt: skip

    async def known_good(self, seed: int) -> tuple[str | None, str]:
        seen = await self.run_job(self.call(seed), self.params.request_timeout_s)
        await self.forget([seen])
        return seen.digest, seen.text()

    async def solo_outputs(self, call: WireCall) -> tuple[bytes, ...]:
        seen = await self.run_job(call, self.params.request_timeout_s)
        await self.forget([seen])
        return seen.outputs if seen.terminals == ("completed",) else ()

    async def inject_jobs(self, case: FaultCase, arm: FaultArm,
                          ) -> tuple[JobSeen, list[JobSeen], Kill | None]:  # fmt: skip
        """The faulted job and its peer jobs, into the armed fault (and the SIGKILL the case
        needed, as ``CaseDriver.inject``)."""
        p = self.params
        hang = case.mode is FaultMode.HANG and not case.sigkill
        faulted = asyncio.create_task(self.run_job(
            self.faulted(arm), p.error_deadline_s + (p.late_s if case.cancel else 0.0),
            cancel_after_s=p.hang_client_timeout_s if hang else None,
            cancel_on=arm if case.cancel else None))  # fmt: skip
        await asyncio.sleep(p.peer_delay_s)
        peers = [asyncio.create_task(self.run_job(self.peer(i), p.request_timeout_s))
                 for i in range(p.peers)]  # fmt: skip
        kill = await self.kill_held(arm) if case.sigkill else None
        return await faulted, list(await asyncio.gather(*peers)), kill

    async def unfinished(self, jobs: list[JobSeen]) -> list[str] | str:
        """The case's jobs the listing shows queued/in progress; a reason when it is unreadable."""
        ids = {j.job_id for j in jobs if j.job_id is not None}
        listed: dict[str, str] = {}
        after: str | None = None
        try:
            for _ in range(20):
                query: dict[str, str | int | float] = {"limit": 100, "order": "desc"}
                if after is not None:
                    query["after"] = after
                raw = await self.side.send_raw("GET", "/v1/videos", params=query,
                                               timeout_s=self.params.health_timeout_s)
                doc = _doc(raw)
                data = doc.get("data")
                if not raw.ok or not isinstance(data, list):
                    return f"the job listing answered HTTP {raw.status} without a list"
                for item in data:
                    if isinstance(item, dict) and item.get("id") in ids:
                        listed[str(item["id"])] = str(item.get("status"))
                last = doc.get("last_id")
                if not doc.get("has_more") or not isinstance(last, str):
                    break
                after = last
        except ClientError as exc:
            return f"the job listing could not be read ({type(exc).__name__})"
        return [f"{jid} ({status})" for jid, status in listed.items() if status in UNFINISHED]

    async def forget(self, jobs: list[JobSeen]) -> None:
        """Delete the jobs (and their stored outputs) once judged; best effort."""
        for job in jobs:
            if job.job_id is not None:
                try:
                    await self.side.send_raw("DELETE", _path(job.job_id),
                                             timeout_s=self.params.health_timeout_s)
                except ClientError:
                    return
