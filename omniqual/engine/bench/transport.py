"""The bench's hot path: planned requests sent over a lean HTTP/1.1 pool on uvloop.

Chosen by the numbers (tests/bench/bench_peer.py, one instant local server, 3 alternating
repeats, the same seeded issuer, loop and summary on every transport): client CPU-s per 1,000
requests at 200 and 1000 RPS were 0.35-0.43 and 0.17-0.18 over ``client.http1_pool``,
0.55-0.62 and 0.29-0.33 over aiohttp, 1.3-1.4 and 6.3-7.1 over httpx (which also fell behind
its schedule at 1000 RPS). aiohttp and httpx stay in tests/bench/alt_transports.py only to keep
measuring them. Request bodies are still built by ``checks.load_binding.wire_call``, the one
place a planned request becomes an HTTP request. Async video jobs (create, poll, download) are
delegated to ``OmniSend``: polling is not on the issue path."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable
from importlib.metadata import version
from typing import Any

from omniqual.checks.load_binding import OmniSend, wire_call, wire_call_with_prompt
from omniqual.checks.synthetic_inputs import request_prompt
from omniqual.client import OmniClient, encode_multipart
from omniqual.client.http1_pool import Http1Error, Http1Pool
from omniqual.client.server_metrics import metrics_from_doc
from omniqual.loadgen.records import OutcomeStatus, SendOutcome
from omniqual.loadgen.workload import EndpointKind, PlannedRequest


def event_loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop where it is installed (its timers and sockets cost less CPU per request
    than asyncio's), else None: asyncio's default loop."""
    try:
        import uvloop
    except ImportError:  # e.g. Windows, where uvloop does not exist
        return None
    return uvloop.new_event_loop


def transport_label() -> str:
    """What carries the requests on the running loop, as the result JSON records it."""
    uv = type(asyncio.get_running_loop()).__module__.startswith("uvloop")
    loop = f"uvloop {version('uvloop')}" if uv else "asyncio"
    return f"http1 pool (httptools {version('httptools')}) on {loop}"


_WITH_DATA = (EndpointKind.IMAGE, EndpointKind.IMAGE_EDIT, EndpointKind.CHAT)


def judge(kind: EndpointKind, status: int, content_type: str, body: bytes) -> SendOutcome:
    """A 2xx answer that carries output is OK; anything else is an error with its kind."""
    if not 200 <= status < 300:
        return SendOutcome(OutcomeStatus.ERROR, status, f"http_{status}")
    if not body:
        return SendOutcome(OutcomeStatus.ERROR, status, "empty_output")
    peak: float | None = None
    stages: tuple[tuple[str, float], ...] = ()
    if content_type.startswith("application/json"):
        try:
            doc: Any = json.loads(body)
        except ValueError:
            return SendOutcome(OutcomeStatus.ERROR, status, "invalid_json")
        if kind in _WITH_DATA and not (
            isinstance(doc, dict) and (doc.get("data") or doc.get("choices"))
        ):
            return SendOutcome(OutcomeStatus.ERROR, status, "empty_output")
        metrics = metrics_from_doc(doc) if isinstance(doc, dict) else None
        if metrics is not None:
            peak = metrics.peak_memory_mb
            stages = tuple((f"stage:{n}", v) for n, v in metrics.stage_durations_s)
    elif kind in _WITH_DATA:
        return SendOutcome(OutcomeStatus.ERROR, status, "not_json")
    return SendOutcome(OutcomeStatus.OK, status, None, stages, peak)


SEED_MARK = 7_318_264_950_173_846_529
"""A seed no plan draws (plans draw 32-bit seeds): its digits mark where a request's seed goes."""


def _shape_key(planned: PlannedRequest) -> tuple[object, ...]:
    p = planned.params
    return (p.width, p.height, p.num_frames, p.steps, p.prompt_tokens, p.guidance_scale, p.extra)


class Http1Send:
    """A loadgen ``Send`` over :class:`Http1Pool`; use as an async context manager."""

    def __init__(self, base_url: str, *, timeout_s: float = 600.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.pool = Http1Pool(self.base_url, timeout_s=timeout_s)
        self._templates: dict[tuple[object, ...], tuple[bytes, bytes, bytes] | None] = {}
        self._omni: OmniClient | None = None
        self._jobs: OmniSend | None = None

    async def __aenter__(self) -> Http1Send:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.pool.aclose()
        if self._omni is not None:
            await self._omni.aclose()

    def _job_sender(self) -> OmniSend:
        if self._jobs is None:
            self._omni = OmniClient(self.base_url)
            self._jobs = OmniSend(self._omni)
        return self._jobs

    async def __call__(self, planned: PlannedRequest, /) -> SendOutcome:
        if planned.endpoint is EndpointKind.VIDEO_ASYNC:
            return await self._job_sender()(planned)
        try:
            answer = await self.pool.send(self.prepare(planned))
        except TimeoutError:
            return SendOutcome(OutcomeStatus.TIMEOUT, None, "timeout")
        except Http1Error as error:
            return SendOutcome(OutcomeStatus.ERROR, None, error.kind)
        return judge(planned.endpoint, answer.status, answer.content_type.lower(), answer.body)

    def prepare(self, planned: PlannedRequest) -> bytes:
        """The request's bytes as sent (the callback issue path sends these itself): exactly
        ``wire_call``'s request. Requests of one shape and prompt differ only in their seed, so
        each such shape is encoded once with a marker seed and a request splices its own seed's
        digits in (a string join, not an encode per request)."""
        seed = planned.params.seed
        if seed is None:
            return self._encode(planned)
        key = (planned.endpoint, _shape_key(planned), request_prompt(planned))
        template = self._templates.get(key)
        if template is None:
            template = self._templates[key] = self._template(planned)
        if template is None:
            return self._encode(planned)
        head, before, after = template
        digits = str(seed).encode()
        length = str(len(before) + len(digits) + len(after)).encode()
        return b"".join((head, length, b"\r\nAccept: */*\r\n\r\n", before, digits, after))

    def _encode(self, planned: PlannedRequest) -> bytes:
        call = wire_call(planned)
        if call.json is not None:
            body, content_type = json.dumps(call.json).encode(), "application/json"
        else:
            body, content_type = encode_multipart(call.data, call.files)
        return self.pool.prepare(call.method, call.path, content_type, body)

    def _template(self, planned: PlannedRequest) -> tuple[bytes, bytes, bytes] | None:
        """(head up to the length's digits, body before the seed, body after it), or None when
        the marker seed does not appear exactly once in the encoded request."""
        marked = dataclasses.replace(
            planned, params=dataclasses.replace(planned.params, seed=SEED_MARK))
        # The prompt follows the seed: encode the marked request with this request's prompt.
        call = wire_call_with_prompt(marked, request_prompt(planned))
        if call.json is not None:
            body, content_type = json.dumps(call.json).encode(), "application/json"
        else:
            body, content_type = encode_multipart(call.data, call.files)
        mark = str(SEED_MARK).encode()
        if body.count(mark) != 1:
            return None
        before, _, after = body.partition(mark)
        whole = self.pool.head(call.method, call.path, content_type, 0)
        head = whole[: whole.index(b"Content-Length: ") + len(b"Content-Length: ")]
        return head, before, after


__all__ = ["Http1Send", "event_loop_factory", "judge", "transport_label"]
