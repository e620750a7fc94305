"""Binds loadgen's ``Send`` protocol to ``OmniClient``: the only place planned load becomes HTTP.

A ``PlannedRequest`` names an endpoint kind and a shape; ``wire_call`` turns it into one HTTP
request for the row's API mode, and ``OmniSend`` performs it, optionally as an injected fault:
a client disconnect, a client timeout, or (async video jobs) a DELETE after a delay. Every async
job the binding touches is traced (statuses seen, terminal states, content status) so the soak
and abort gates can demand exactly one terminal result and no content for a cancelled job.
Prompts are synthetic and never logged.
"""

import asyncio
import dataclasses
import functools
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from omniqual.checks.synthetic_inputs import reference_png, request_prompt
from omniqual.client import (
    NO_JSON,
    AudioGenerateRequest,
    ChatDiffusionRequest,
    ClientError,
    FilePart,
    ImageEditRequest,
    ImageGenerationRequest,
    OmniClient,
    RawResponse,
    TargetTimeout,
    VideoCreateRequest,
    metrics_from_doc,
    server_metrics,
)
from omniqual.loadgen.records import OutcomeStatus, SendOutcome
from omniqual.loadgen.workload import EndpointKind, PlannedRequest, RequestParams

ENDPOINT_OF_API_MODE: Mapping[str, EndpointKind] = {
    "images-generations": EndpointKind.IMAGE,
    "images-edits": EndpointKind.IMAGE_EDIT,
    "videos-async": EndpointKind.VIDEO_ASYNC,
    "videos-sync": EndpointKind.VIDEO_SYNC,
    "audio-generate": EndpointKind.AUDIO,
    "chat-completions": EndpointKind.CHAT,
}
PATH_OF: Mapping[EndpointKind, str] = {
    EndpointKind.IMAGE: "/v1/images/generations",
    EndpointKind.IMAGE_EDIT: "/v1/images/edits",
    EndpointKind.VIDEO_ASYNC: "/v1/videos",
    EndpointKind.VIDEO_SYNC: "/v1/videos/sync",
    EndpointKind.AUDIO: "/v1/audio/generate",
    EndpointKind.CHAT: "/v1/chat/completions",
}


class Injection(StrEnum):
    NONE = "none"
    DISCONNECT = "disconnect"  # close the connection mid-request (sync endpoints)
    TIMEOUT = "timeout"  # give up as a client-side timeout (sync endpoints)
    CANCEL = "cancel"  # DELETE the async job (videos-async)


def endpoint_for(api_mode: str | None) -> EndpointKind | None:
    return None if api_mode is None else ENDPOINT_OF_API_MODE.get(api_mode)


@dataclass(frozen=True, slots=True)
class WireCall:
    method: str
    path: str
    json: dict[str, Any] | None = None
    data: dict[str, Any] | None = None
    files: tuple[FilePart, ...] = ()


def wire_call(planned: PlannedRequest) -> WireCall:
    """The HTTP request for one planned request (shape fields the endpoint does not take are
    left out; ``extra`` entries pass through as top-level fields, or ``extra_body`` for chat).
    Built once per (shape, prompt), a handful per mix entry; each request's seed is set on a
    copy (a load client's per-request cost, measured in tests/bench/bench_peer.py)."""
    return wire_call_with_prompt(planned, request_prompt(planned))


def wire_call_with_prompt(planned: PlannedRequest, prompt: str) -> WireCall:
    """``wire_call`` with a given prompt (the bench encodes a marker seed with the prompt of
    the request it stands for)."""
    p = planned.params
    if p.seed is None:
        return _wire_call(planned.endpoint, p, prompt)
    unseeded = _wire_call(planned.endpoint, dataclasses.replace(p, seed=None), prompt)
    return _seeded(unseeded, planned.endpoint, p.seed)


def _seeded(call: WireCall, kind: EndpointKind, seed: int) -> WireCall:
    if call.json is None:
        return dataclasses.replace(call, data={**(call.data or {}), "seed": str(seed)})
    if kind is EndpointKind.CHAT:
        extra_body = {**call.json.get("extra_body", {}), "seed": seed}
        return dataclasses.replace(call, json={**call.json, "extra_body": extra_body})
    return dataclasses.replace(call, json={**call.json, "seed": seed})


@functools.lru_cache(maxsize=256)
def _wire_call(kind: EndpointKind, p: RequestParams, prompt: str) -> WireCall:
    extra = dict(p.extra)
    size = f"{p.width}x{p.height}" if p.width and p.height else None
    path = PATH_OF[kind]
    if kind is EndpointKind.IMAGE:
        body = ImageGenerationRequest(
            prompt=prompt, n=1, size=size, num_inference_steps=p.steps,
            guidance_scale=p.guidance_scale, seed=p.seed, **extra,
        )  # fmt: skip
        return WireCall("POST", path, json=body.to_json())
    if kind is EndpointKind.IMAGE_EDIT:
        edit = ImageEditRequest(
            prompt=prompt, images=[reference_png(p.width or 64, p.height or 64)], n=1, size=size,
            num_inference_steps=p.steps, guidance_scale=p.guidance_scale, seed=p.seed,
            response_format="b64_json", **extra,
        )  # fmt: skip
        fields, files = edit.to_multipart()
        return WireCall("POST", path, data=dict(fields), files=tuple(files))
    if kind in (EndpointKind.VIDEO_ASYNC, EndpointKind.VIDEO_SYNC):
        video = VideoCreateRequest(
            prompt=prompt, width=p.width, height=p.height, num_frames=p.num_frames,
            num_inference_steps=p.steps, guidance_scale=p.guidance_scale, seed=p.seed, **extra,
        )  # fmt: skip
        fields, files = video.to_multipart()
        return WireCall("POST", path, data=dict(fields), files=tuple(files))
    if kind is EndpointKind.AUDIO:
        audio = AudioGenerateRequest(
            input=prompt, num_inference_steps=p.steps, guidance_scale=p.guidance_scale,
            seed=p.seed, **extra,
        )  # fmt: skip
        return WireCall("POST", path, json=audio.to_json())
    knobs = {"height": p.height, "width": p.width, "num_inference_steps": p.steps,
             "guidance_scale": p.guidance_scale, "seed": p.seed, **extra}  # fmt: skip
    chat = ChatDiffusionRequest(
        prompt=prompt, extra_body={k: v for k, v in knobs.items() if v is not None}
    )
    return WireCall("POST", path, json=chat.to_json())


def server_timings(raw: RawResponse) -> tuple[tuple[str, float], ...]:
    """Queue/service figures the server reports (``X-Inference-Time-S``; ``stage_durations``
    from the JSON body or the ``X-Stage-Durations`` header, in seconds), as (name, seconds)
    pairs."""
    found: list[tuple[str, float]] = []
    if (inference := raw.inference_time_s) is not None:
        found.append(("inference", inference))
    found += [(f"stage:{name}", value) for name, value in server_metrics(raw).stage_durations_s]
    return tuple(found)


def usable_output(kind: EndpointKind, raw: RawResponse) -> bool:
    """A 2xx answer that actually carries output (light check: the gates judge load, not
    content; the API contract gate inspects media)."""
    if not raw.ok or not raw.body:
        return False
    if kind in (EndpointKind.IMAGE, EndpointKind.IMAGE_EDIT, EndpointKind.CHAT):
        try:
            doc = raw.json()
        except ClientError:
            return False
        if not isinstance(doc, dict):
            return False
        return bool(doc.get("data") or doc.get("choices"))
    return True


@dataclass(frozen=True, slots=True)
class EntryBinding:
    """How the requests of one mix entry are sent: plainly or as an injected fault."""

    injection: Injection = Injection.NONE
    cut_after_s: float = 0.0  # when the disconnect / timeout / DELETE happens, after sending
    recheck_after_s: float = 0.0  # after a DELETE: time for an ignored cancel to show up


@dataclass(frozen=True, slots=True)
class BindingSettings:
    request_timeout_s: float = 120.0
    job_timeout_s: float = 300.0
    poll_interval_s: float = 0.05
    settle_polls: int = 1  # extra polls after a terminal state, to catch a second one


@dataclass(slots=True)
class JobTrace:
    """One async video job as the client saw it."""

    index: int
    job_id: str
    statuses: list[str] = field(default_factory=list)
    cancelled: bool = False
    delete_status: int | None = None
    after_cancel_status: int | None = None  # GET status after the DELETE (404 = gone)
    content_status: int | None = None
    ended_about: float | None = None
    """When it reached a terminal state (monotonic): midway between the last poll that saw it
    unfinished and the first that saw it end (set where the client follows it to the end)."""

    @property
    def terminal_states(self) -> tuple[str, ...]:
        """Distinct terminal states observed, in order (a healthy job has exactly one)."""
        seen: list[str] = []
        for status in self.statuses:
            if status in ("completed", "failed", "cancelled") and status not in seen:
                seen.append(status)
        return tuple(seen)

    @property
    def served_after_cancel(self) -> bool:
        return self.cancelled and self.content_status == 200


def _transport_kind(exc: ClientError) -> str:
    return type(exc).__name__


class OmniSend:
    """A loadgen ``Send`` over one ``OmniClient``; ``bindings`` maps mix entry names to their
    injection (entries not named are sent plainly)."""

    def __init__(
        self,
        client: OmniClient,
        settings: BindingSettings | None = None,
        bindings: Mapping[str, EntryBinding] | None = None,
    ) -> None:
        self.client = client
        self.settings = settings or BindingSettings()
        self.bindings = dict(bindings or {})
        self.jobs: list[JobTrace] = []

    async def __call__(self, planned: PlannedRequest, /) -> SendOutcome:
        binding = self.bindings.get(planned.entry, EntryBinding())
        call = wire_call(planned)
        if planned.endpoint is EndpointKind.VIDEO_ASYNC:
            return await self._async_job(planned, call, binding)
        if binding.injection is Injection.DISCONNECT:
            cut = await self.client.send_and_disconnect(
                call.method, call.path, after_s=binding.cut_after_s, json=self._json(call),
                data=call.data, files=list(call.files) or None,
            )  # fmt: skip
            if cut.answered:
                return SendOutcome(OutcomeStatus.OK, cut.status, "answered_before_cut")
            return SendOutcome(OutcomeStatus.ABORTED, None, "client_disconnect")
        timeout = self.settings.request_timeout_s
        if binding.injection is Injection.TIMEOUT:
            timeout = binding.cut_after_s
        try:
            raw = await self._send(call, timeout)
        except TargetTimeout:
            if binding.injection is Injection.TIMEOUT:
                return SendOutcome(OutcomeStatus.ABORTED, None, "client_timeout")
            return SendOutcome(OutcomeStatus.TIMEOUT, None, "TargetTimeout")
        except ClientError as exc:
            return SendOutcome(OutcomeStatus.ERROR, None, _transport_kind(exc))
        return self._judge(planned.endpoint, raw)

    @staticmethod
    def _json(call: WireCall) -> Any:
        return NO_JSON if call.json is None else call.json

    async def _send(self, call: WireCall, timeout_s: float) -> RawResponse:
        return await self.client.send_raw(
            call.method, call.path, json=self._json(call), data=call.data,
            files=list(call.files) or None, timeout_s=timeout_s,
        )  # fmt: skip

    @staticmethod
    def _judge(kind: EndpointKind, raw: RawResponse) -> SendOutcome:
        timings = server_timings(raw)
        if not raw.ok:
            kind_name = f"http_{raw.status}"
            return SendOutcome(OutcomeStatus.ERROR, raw.status, kind_name, timings)
        if not usable_output(kind, raw):
            return SendOutcome(OutcomeStatus.ERROR, raw.status, "empty_output", timings)
        peak = server_metrics(raw).peak_memory_mb
        return SendOutcome(OutcomeStatus.OK, raw.status, None, timings, peak)

    async def _async_job(
        self, planned: PlannedRequest, call: WireCall, binding: EntryBinding
    ) -> SendOutcome:
        try:
            created = await self._send(call, self.settings.request_timeout_s)
            if not created.ok:
                return SendOutcome(OutcomeStatus.ERROR, created.status, f"http_{created.status}")
            doc = created.json()
        except ClientError as exc:
            return SendOutcome(OutcomeStatus.ERROR, None, _transport_kind(exc))
        if not isinstance(doc, dict) or not doc.get("id"):
            return SendOutcome(OutcomeStatus.ERROR, created.status, "job_without_id")
        trace = JobTrace(planned.index, str(doc["id"]), [str(doc.get("status", ""))])
        self.jobs.append(trace)
        try:
            if binding.injection is Injection.CANCEL:
                return await self._cancel(trace, binding)
            return await self._follow(trace)
        except ClientError as exc:
            return SendOutcome(OutcomeStatus.ERROR, None, _transport_kind(exc))

    async def _follow(self, trace: JobTrace) -> SendOutcome:
        """Poll to a terminal state (plus settle polls), then fetch the content."""
        settings = self.settings
        deadline = time.monotonic() + settings.job_timeout_s
        after_terminal = -1
        last: RawResponse | None = None
        while after_terminal < settings.settle_polls:
            last = await self.client.send_raw("GET", f"/v1/videos/{trace.job_id}")
            status = _job_status(last)
            trace.statuses.append(status)
            if status in ("completed", "failed", "cancelled"):
                after_terminal += 1
            elif time.monotonic() > deadline:
                return SendOutcome(OutcomeStatus.TIMEOUT, last.status, "job_timeout")
            if after_terminal < settings.settle_polls:
                await asyncio.sleep(settings.poll_interval_s)
        assert last is not None
        terminals = trace.terminal_states
        if len(terminals) > 1:
            return SendOutcome(OutcomeStatus.ERROR, last.status, "two_terminal_states")
        if terminals != ("completed",):
            return SendOutcome(OutcomeStatus.ERROR, last.status, f"job_{terminals[0]}")
        content = await self.client.send_raw("GET", f"/v1/videos/{trace.job_id}/content")
        trace.content_status = content.status
        timings = _job_timings(last)
        if not content.ok or not content.body:
            return SendOutcome(OutcomeStatus.ERROR, content.status, "content_missing", timings)
        peak = server_metrics(last).peak_memory_mb
        return SendOutcome(OutcomeStatus.OK, content.status, None, timings, peak)

    async def _cancel(self, trace: JobTrace, binding: EntryBinding) -> SendOutcome:
        if binding.cut_after_s > 0:
            await asyncio.sleep(binding.cut_after_s)
        # A job that already finished cannot be cut: that injection did not happen, and a
        # 'completed' seen after the DELETE must not be blamed on ignored cancellation.
        before = await self.client.send_raw("GET", f"/v1/videos/{trace.job_id}")
        status = _job_status(before)
        trace.statuses.append(status)
        if status == "completed":
            return SendOutcome(OutcomeStatus.OK, before.status, "answered_before_cut")
        if status in ("failed", "cancelled"):
            return SendOutcome(OutcomeStatus.ERROR, before.status, f"job_{status}")
        deleted = await self.client.send_raw("DELETE", f"/v1/videos/{trace.job_id}")
        trace.cancelled = True
        trace.delete_status = deleted.status
        await self.check_cancelled(trace, binding.recheck_after_s)
        if deleted.status >= 500:
            return SendOutcome(OutcomeStatus.ERROR, deleted.status, f"delete_http_{deleted.status}")
        return SendOutcome(OutcomeStatus.ABORTED, deleted.status, "job_cancelled")

    async def check_cancelled(self, trace: JobTrace, wait_s: float = 0.0) -> None:
        """After a DELETE: the job should be gone (404) or terminally cancelled/failed, and its
        content must not be served. ``wait_s`` gives a job that ignored the DELETE time to
        finish, so a late 'completed' is seen."""
        if wait_s > 0:
            await asyncio.sleep(wait_s)
        raw = await self.client.send_raw("GET", f"/v1/videos/{trace.job_id}")
        trace.after_cancel_status = raw.status
        if raw.status != 404:
            trace.statuses.append(_job_status(raw))
        content = await self.client.send_raw("GET", f"/v1/videos/{trace.job_id}/content")
        trace.content_status = content.status


def _job_status(raw: RawResponse) -> str:
    try:
        doc = raw.json()
    except ClientError:
        return f"http_{raw.status}"
    return str(doc.get("status", f"http_{raw.status}")) if isinstance(doc, dict) else "?"


def _job_timings(raw: RawResponse) -> tuple[tuple[str, float], ...]:
    try:
        doc = raw.json()
    except ClientError:
        return ()
    found: list[tuple[str, float]] = []
    if isinstance(doc, dict):
        if isinstance(value := doc.get("inference_time_s"), int | float):
            found.append(("inference", float(value)))
        found += [(f"stage:{n}", v) for n, v in metrics_from_doc(doc).stage_durations_s]
    return tuple(found)
