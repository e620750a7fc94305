"""One isolation request on the wire and what came back: its outputs in answer order, the ids
the server gave it (async job id, response id), what an async job reported about itself, and
when it was sent and answered (client clock). Every HTTP answer is data; only the bytes of the
outputs are kept, never a prompt or a payload in text."""

import asyncio
import contextlib
import time
from dataclasses import dataclass

from omniqual.checks.api_contract.exchange import job_id
from omniqual.checks.api_contract.outputs import extract_images
from omniqual.checks.api_contract.wire import WireRequest
from omniqual.checks.isolation.plan import IsoRequest
from omniqual.client import ClientError, OmniClient, RawResponse

IMAGE_MODES = frozenset({"images-generations", "images-edits", "chat-completions"})


@dataclass(frozen=True, slots=True)
class Served:
    label: str
    via: str
    """The API mode it went through (the row's, or its twin in a ``mixed`` round)."""
    status: int | None
    outputs: tuple[bytes, ...]
    started_s: float
    finished_s: float
    problem: str | None = None
    """Why a 2xx answer gave no outputs, or the transport failure."""
    error: str = ""
    """The error message of a non-2xx answer (first 160 characters)."""
    response_id: str | None = None
    job_id: str | None = None
    job_size: str | None = None
    """The size the async job reported for itself."""

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300 and self.problem is None

    @property
    def elapsed_s(self) -> float:
        return self.finished_s - self.started_s


@dataclass(frozen=True, slots=True)
class Timeouts:
    request_s: float
    job_s: float
    poll_s: float


async def send(client: OmniClient, request: IsoRequest, timeouts: Timeouts,
               via: str | None = None) -> Served:  # fmt: skip
    mode = via or request.api_mode
    wire = request.wire(mode)
    started = time.perf_counter()
    try:
        raw = await _post(client, wire, timeouts.request_s)
    except ClientError as exc:
        return Served(request.label, mode, None, (), started, time.perf_counter(),
                      problem=f"transport: {type(exc).__name__}")  # fmt: skip
    if not raw.ok:
        return Served(request.label, mode, raw.status, (), started, time.perf_counter(),
                      error=_message(raw))  # fmt: skip
    if mode == "videos-async":
        return await _follow_job(client, request.label, raw, timeouts, started)
    rid = raw.request_id or _body_id(raw)
    if mode in IMAGE_MODES:
        images, problem = extract_images(raw.body, raw.content_type)
        if not images and problem is None:
            problem = "a 2xx answer without images"
        return Served(request.label, mode, raw.status, tuple(images), started,
                      time.perf_counter(), problem, response_id=rid)  # fmt: skip
    problem = None if raw.body else "a 2xx answer without content"
    return Served(request.label, mode, raw.status, (raw.body,) if raw.body else (), started,
                  time.perf_counter(), problem, response_id=rid)  # fmt: skip


async def _post(client: OmniClient, wire: WireRequest, timeout_s: float) -> RawResponse:
    if wire.uses_json:
        return await client.send_raw(wire.method, wire.path, json=wire.json, timeout_s=timeout_s)
    return await client.send_raw(wire.method, wire.path, data=wire.data,
                                 files=list(wire.files) or None, timeout_s=timeout_s)  # fmt: skip


async def _follow_job(client: OmniClient, label: str, created: RawResponse, timeouts: Timeouts,
                      started: float) -> Served:  # fmt: skip
    video_id = job_id(created)
    if video_id is None:
        return Served(label, "videos-async", created.status, (), started, time.perf_counter(),
                      "the job answer carries no id")  # fmt: skip
    size: str | None = None
    try:
        polled = await client.wait_video(video_id, interval_s=timeouts.poll_s,
                                         timeout_s=timeouts.job_s)  # fmt: skip
        size = polled.final.size
        if polled.final.status != "completed":
            return Served(label, "videos-async", created.status, (), started,
                          time.perf_counter(), f"job ended {polled.final.status}",
                          job_id=video_id, job_size=size)  # fmt: skip
        content = await client.send_raw("GET", f"/v1/videos/{video_id}/content",
                                        timeout_s=timeouts.request_s)  # fmt: skip
        finished = time.perf_counter()
        if not content.ok or not content.body:
            return Served(label, "videos-async", content.status, (), started, finished,
                          f"GET content answered HTTP {content.status}", job_id=video_id,
                          job_size=size)  # fmt: skip
        return Served(label, "videos-async", content.status, (content.body,), started, finished,
                      job_id=video_id, job_size=size)  # fmt: skip
    except ClientError as exc:
        return Served(label, "videos-async", created.status, (), started, time.perf_counter(),
                      f"job: {type(exc).__name__}", job_id=video_id, job_size=size)  # fmt: skip
    finally:
        # Best effort: the job was answered; a job left behind is another gate's finding.
        with contextlib.suppress(ClientError):
            await asyncio.shield(client.send_raw("DELETE", f"/v1/videos/{video_id}",
                                                 timeout_s=30))  # fmt: skip


def _message(raw: RawResponse) -> str:
    try:
        doc = raw.json()
    except ClientError:
        return raw.body[:160].decode("utf-8", "replace")
    error = doc.get("error") if isinstance(doc, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    if message is None and isinstance(doc, dict):
        message = doc.get("detail") or doc.get("message")
    return str(message or "")[:160]


def _body_id(raw: RawResponse) -> str | None:
    if not raw.content_type.startswith("application/json"):
        return None
    try:
        doc = raw.json()
    except ClientError:
        return None
    value = doc.get("id") if isinstance(doc, dict) else None
    return value if isinstance(value, str) and value else None
