"""The bench's hot path: planned requests sent over one pooled aiohttp session.

Measured against httpx through the same issuer, on one instant local server
(tests/bench/bench_peer.py, 3 alternating repeats): aiohttp costs 0.27-0.28 client CPU-s per
1,000 requests at 1000 RPS, where httpx costs 4.5-5.9 and falls behind its schedule (0.69-0.98
of planned); at 200 RPS 0.43-0.49 against 1.07-1.33. So the bench issues over aiohttp; the
request bodies are still built by ``checks.load_binding.wire_call``, the one place a planned
request becomes an HTTP request. Async video jobs (create, poll, download) are delegated to
``OmniSend``: polling is not on the issue path.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp

from omniqual.checks.load_binding import OmniSend, WireCall, wire_call
from omniqual.client import OmniClient
from omniqual.client.server_metrics import metrics_from_doc
from omniqual.loadgen.records import OutcomeStatus, SendOutcome
from omniqual.loadgen.workload import EndpointKind, PlannedRequest

TRANSPORT = f"aiohttp {aiohttp.__version__}"
_JSON = {"content-type": "application/json"}
_WITH_DATA = (EndpointKind.IMAGE, EndpointKind.IMAGE_EDIT, EndpointKind.CHAT)


def _form(call: WireCall) -> aiohttp.FormData:
    form = aiohttp.FormData()
    for name, value in (call.data or {}).items():
        for item in value if isinstance(value, list) else [value]:
            form.add_field(name, str(item))
    for name, (filename, content, content_type) in call.files:
        form.add_field(name, content, filename=filename, content_type=content_type)
    return form


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


class AiohttpSend:
    """A loadgen ``Send`` over aiohttp; use as an async context manager."""

    def __init__(self, base_url: str, *, timeout_s: float = 600.0, pool: int = 1000) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = aiohttp.ClientTimeout(total=timeout_s)
        self.pool = pool
        self._session: aiohttp.ClientSession | None = None
        self._omni: OmniClient | None = None
        self._jobs: OmniSend | None = None

    async def __aenter__(self) -> AiohttpSend:
        connector = aiohttp.TCPConnector(limit=self.pool, limit_per_host=self.pool)
        self._session = aiohttp.ClientSession(connector=connector, timeout=self.timeout)
        return self

    async def __aexit__(self, *_exc: object) -> None:
        if self._session is not None:
            await self._session.close()
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
        assert self._session is not None, "use AiohttpSend as an async context manager"
        call = wire_call(planned)
        url = self.base_url + call.path
        try:
            if call.json is not None:
                body = json.dumps(call.json).encode()
                response = self._session.request(call.method, url, data=body, headers=_JSON)
            else:
                response = self._session.request(call.method, url, data=_form(call))
            async with response as answer:
                content = await answer.read()
                status, content_type = answer.status, answer.content_type
        except TimeoutError:
            return SendOutcome(OutcomeStatus.TIMEOUT, None, "timeout")
        except aiohttp.ClientError as exc:
            return SendOutcome(OutcomeStatus.ERROR, None, type(exc).__name__)
        except asyncio.CancelledError:
            raise
        return judge(planned.endpoint, status, content_type, content)


__all__ = ["TRANSPORT", "AiohttpSend", "judge"]
