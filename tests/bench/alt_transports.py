"""The transports ``omniqual bench`` did not pick, kept here only to keep measuring them.

bench_peer.py runs the same issuer over each (drivers ``oq-aiohttp`` and ``oq-httpx``) beside
``omniqual`` (``engine.bench.transport.Http1Send``), so the choice stays checked by numbers.
Both reuse the bench's request building (``wire_call``) and answer judging (``judge``).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import httpx

from omniqual.checks.load_binding import WireCall, wire_call
from omniqual.engine.bench.transport import judge
from omniqual.loadgen.records import OutcomeStatus, SendOutcome
from omniqual.loadgen.workload import PlannedRequest

_JSON = {"content-type": "application/json"}


def _form(call: WireCall) -> aiohttp.FormData:
    form = aiohttp.FormData()
    for name, value in (call.data or {}).items():
        for item in value if isinstance(value, list) else [value]:
            form.add_field(name, str(item))
    for name, (filename, content, content_type) in call.files:
        form.add_field(name, content, filename=filename, content_type=content_type)
    return form


class AiohttpSend:
    """A loadgen ``Send`` over one pooled aiohttp session (sync endpoints only)."""

    def __init__(self, base_url: str, *, timeout_s: float = 600.0, pool: int = 1000) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = aiohttp.ClientTimeout(total=timeout_s)
        self.pool = pool
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> AiohttpSend:
        connector = aiohttp.TCPConnector(limit=self.pool, limit_per_host=self.pool)
        self._session = aiohttp.ClientSession(connector=connector, timeout=self.timeout)
        return self

    async def __aexit__(self, *_exc: object) -> None:
        if self._session is not None:
            await self._session.close()

    async def __call__(self, planned: PlannedRequest, /) -> SendOutcome:
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


class HttpxSend:
    """A loadgen ``Send`` over one pooled ``httpx.AsyncClient`` (JSON endpoints only)."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    async def __call__(self, planned: Any, /) -> SendOutcome:
        call = wire_call(planned)
        body = json.dumps(call.json).encode()
        try:
            response = await self.client.post(call.path, content=body, headers=_JSON)
        except httpx.HTTPError as exc:
            return SendOutcome(OutcomeStatus.ERROR, None, type(exc).__name__)
        kind = response.headers.get("content-type", "")
        return judge(planned.endpoint, response.status_code, kind, response.content)
