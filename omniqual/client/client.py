"""`OmniClient`: the one async HTTP client for a vLLM-Omni diffusion server.

`send_raw` sends anything (including deliberately invalid requests) and returns every HTTP
answer as a `RawResponse`; only transport failures raise. The typed calls build on it, raise
`ApiError` on error statuses and `TargetProtocolError` on unusable bodies. Only method, path,
status and timing are logged: prompts and payloads never are.
"""

from __future__ import annotations

import asyncio
import json as jsonlib
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ConfigDict, ValidationError

from omniqual.client.decoding import (
    decode_data_url,
    images_result,
    media_result,
    parse_model,
    require_ok,
)
from omniqual.client.errors import (
    TargetProtocolError,
    TargetTimeout,
    TargetUnreachable,
    map_transport_error,
)
from omniqual.client.form_encoding import FilePart, encode_multipart
from omniqual.client.raw import RawResponse, keep_header
from omniqual.client.results import (
    ChatImagesResult,
    DisconnectOutcome,
    HealthResult,
    ImagesResult,
    MediaResult,
    VideoPollResult,
)
from omniqual.client.schemas import (
    AudioGenerateRequest,
    ChatCompletionResponse,
    ChatDiffusionRequest,
    ImageEditRequest,
    ImageGenerationRequest,
    ModelList,
    VideoCreateRequest,
    VideoDeleted,
    VideoJob,
    VideoList,
    parse_error_info,
)

logger = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)


class ServerVersion(BaseModel):
    """``GET /version``: vLLM's own release in ``version`` (vLLM-Omni mounts vLLM's route);
    any other key a build adds (e.g. ``vllm_omni_version``) is kept."""

    model_config = ConfigDict(extra="allow", frozen=True)

    version: str | None = None


class OpenApiDocument(BaseModel):
    """``GET /openapi.json``: only ``paths`` and ``components`` are read; the rest is kept."""

    model_config = ConfigDict(extra="allow", frozen=True)

    paths: dict[str, dict[str, Any]] = {}
    components: dict[str, Any] = {}


class _NoBody:
    """Marks "no JSON body", so that `json=None` sends a literal JSON null."""


NO_JSON: Any = _NoBody()


@dataclass(frozen=True, slots=True)
class ClientTimeouts:
    """httpx phase timeouts plus an optional overall deadline per request (`total_s`), which also
    bounds slow-drip answers and in-process transports that ignore httpx timeouts."""

    connect_s: float = 5.0
    read_s: float = 600.0
    write_s: float = 60.0
    pool_s: float = 30.0
    total_s: float | None = None

    def to_httpx(self, read_override_s: float | None = None) -> httpx.Timeout:
        read = self.read_s if read_override_s is None else read_override_s
        return httpx.Timeout(
            connect=self.connect_s, read=read, write=self.write_s, pool=self.pool_s
        )


KEEPALIVE_EXPIRY_S = 2.0
"""How long an idle connection is kept for reuse: well under the 5 s after which uvicorn (the
server vLLM-Omni runs on; ``VLLM_HTTP_TIMEOUT_KEEP_ALIVE``) closes an idle one. At an equal 5 s,
a request sent on a connection the server is closing that instant is lost ("Server disconnected
without sending a response"): a failure the client causes and a soak would blame on the server."""


class OmniClient:
    """Async client bound to one server; use as `async with OmniClient(url) as client:`."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        timeouts: ClientTimeouts | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        max_connections: int = 64,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeouts = timeouts or ClientTimeouts()
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            headers=headers,
            timeout=self.timeouts.to_httpx(),
            transport=transport,
            limits=httpx.Limits(
                max_connections=max_connections, max_keepalive_connections=max_connections,
                keepalive_expiry=KEEPALIVE_EXPIRY_S,
            ),
            follow_redirects=False,
            trust_env=False,  # no proxy from the environment may sit between us and the target
        )

    async def __aenter__(self) -> OmniClient:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    # ------------------------------------------------------------------ low level

    async def send_raw(
        self,
        method: str,
        path: str,
        *,
        json: Any = NO_JSON,
        data: Mapping[str, Any] | None = None,
        files: Sequence[FilePart] | None = None,
        content: bytes | None = None,
        params: Mapping[str, str | int | float] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout_s: float | None = None,
    ) -> RawResponse:
        """Send one request and return the answer whatever its status.

        `data`/`files` are always encoded as multipart/form-data; `content` sends raw bytes
        (set the content type in `headers`). `timeout_s` overrides the read timeout and the
        overall deadline for this request. Raises only `ClientError` transport subclasses
        (and `ValueError` when more than one kind of body is given)."""
        given = [json is not NO_JSON, data is not None or files is not None, content is not None]
        if sum(given) > 1:
            raise ValueError("send_raw takes at most one of json=, data=/files=, content=")
        request_headers = dict(headers or {})
        body = content
        if json is not NO_JSON:
            body = jsonlib.dumps(json, separators=(",", ":"), ensure_ascii=False).encode()
            request_headers.setdefault("Content-Type", "application/json")
        if data is not None or files is not None:
            body, form_type = encode_multipart(data, files)
            request_headers.setdefault("Content-Type", form_type)
        try:
            request = self._http.build_request(
                method,
                path,
                content=body,
                params=params,
                headers=request_headers,
                timeout=self.timeouts.to_httpx(timeout_s),
            )
        except httpx.InvalidURL as exc:
            raise TargetUnreachable(
                f"{self.base_url}{path}", str(exc), "check the base URL"
            ) from exc
        return await self._send(request, method, path, timeout_s)

    async def _send(
        self, request: httpx.Request, method: str, path: str, timeout_s: float | None
    ) -> RawResponse:
        url = str(request.url)
        deadline = timeout_s if timeout_s is not None else self.timeouts.total_s
        started = time.perf_counter()
        try:
            async with asyncio.timeout(deadline):
                response = await self._http.send(request)
        except TimeoutError as exc:
            raise TargetTimeout(url, "waiting for the whole answer", deadline) from exc
        except httpx.RequestError as exc:
            raise map_transport_error(exc, url, timeout_s or self.timeouts.read_s) from exc
        elapsed = time.perf_counter() - started
        kept = {k.lower(): v for k, v in response.headers.items() if keep_header(k)}
        content_type = kept.get("content-type", "").split(";", 1)[0].strip().lower()
        body = response.content
        logger.debug("%s %s -> %d in %.3fs", method, path, response.status_code, elapsed)
        return RawResponse(
            method=method,
            path=path,
            url=url,
            status=response.status_code,
            headers=MappingProxyType(kept),
            body=body,
            elapsed_s=elapsed,
            content_type=content_type,
            error=parse_error_info(body) if response.status_code >= 400 else None,
        )

    async def send_and_disconnect(
        self,
        method: str,
        path: str,
        *,
        after_s: float,
        json: Any = NO_JSON,
        data: Mapping[str, Any] | None = None,
        files: Sequence[FilePart] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> DisconnectOutcome:
        """Start a request and, if no answer came within `after_s`, cancel it: the in-flight
        connection is closed, which the server sees as a client disconnect (abort)."""
        started = time.perf_counter()
        task = asyncio.create_task(
            self.send_raw(method, path, json=json, data=data, files=files, headers=headers)
        )
        try:
            done, _pending = await asyncio.wait({task}, timeout=after_s)
        except asyncio.CancelledError:
            task.cancel()  # never leave the request running behind a cancelled caller
            raise
        if task in done:
            raw = task.result()
            return DisconnectOutcome(answered=True, status=raw.status, elapsed_s=raw.elapsed_s)
        task.cancel()
        current = asyncio.current_task()
        try:
            raw = await task
        except asyncio.CancelledError:
            if current is not None and current.cancelling():
                raise  # we ourselves are being cancelled, not just the request
        else:  # the answer won the race against the cancel
            return DisconnectOutcome(answered=True, status=raw.status, elapsed_s=raw.elapsed_s)
        elapsed = time.perf_counter() - started
        logger.debug("%s %s abandoned after %.3fs", method, path, elapsed)
        return DisconnectOutcome(answered=False, status=None, elapsed_s=elapsed)

    # ------------------------------------------------------------------ typed calls

    async def health(self) -> HealthResult:
        raw = await self.send_raw("GET", "/health")
        return HealthResult(status=raw.status, healthy=raw.status == 200, raw=raw)

    async def models(self) -> ModelList:
        return parse_model(ModelList, require_ok(await self.send_raw("GET", "/v1/models")))

    async def version(self) -> ServerVersion:
        return parse_model(ServerVersion, require_ok(await self.send_raw("GET", "/version")))

    async def openapi(self) -> OpenApiDocument:
        """``GET /openapi.json``: the request schemas the server validates against (FastAPI)."""
        return parse_model(OpenApiDocument, require_ok(await self.send_raw("GET", "/openapi.json")))

    async def route_exists(self, path: str) -> bool | None:
        """Whether the server has a route at ``path``, asked with ``OPTIONS`` (no handler runs,
        nothing is created): 404 means no route; 405 or any answer of the route means one;
        a server error says nothing (None)."""
        raw = await self.send_raw("OPTIONS", path)
        if raw.status == 404:
            return False
        if raw.status >= 500:
            return None
        return True

    async def metrics_text(self) -> str:
        return require_ok(await self.send_raw("GET", "/metrics")).body.decode("utf-8", "replace")

    async def generate_image(self, request: ImageGenerationRequest) -> ImagesResult:
        raw = require_ok(
            await self.send_raw("POST", "/v1/images/generations", json=request.to_json())
        )
        return images_result(raw)

    async def edit_image(self, request: ImageEditRequest) -> ImagesResult:
        fields, files = request.to_multipart()
        raw = require_ok(await self.send_raw("POST", "/v1/images/edits", data=fields, files=files))
        return images_result(raw)

    async def create_video(self, request: VideoCreateRequest) -> VideoJob:
        fields, files = request.to_multipart()
        raw = await self.send_raw("POST", "/v1/videos", data=fields, files=files)
        return parse_model(VideoJob, require_ok(raw))

    async def get_video(self, video_id: str) -> VideoJob:
        """A failed job comes back with an error status but a job body: that is a job, not an
        `ApiError`."""
        raw = await self.send_raw("GET", _video_path(video_id))
        if not raw.ok:
            try:
                return VideoJob.model_validate(raw.json())
            except (ValidationError, TargetProtocolError):
                pass
        return parse_model(VideoJob, require_ok(raw))

    async def video_content(self, video_id: str) -> MediaResult:
        return media_result(
            require_ok(await self.send_raw("GET", _video_path(video_id, "/content")))
        )

    async def list_videos(
        self, *, after: str | None = None, limit: int | None = None, order: str | None = None
    ) -> VideoList:
        query = {
            k: v
            for k, v in {"after": after, "limit": limit, "order": order}.items()
            if v is not None
        }
        return parse_model(
            VideoList, require_ok(await self.send_raw("GET", "/v1/videos", params=query))
        )

    async def delete_video(self, video_id: str) -> VideoDeleted:
        return parse_model(
            VideoDeleted, require_ok(await self.send_raw("DELETE", _video_path(video_id)))
        )

    async def wait_video(
        self,
        video_id: str,
        *,
        interval_s: float = 0.5,
        timeout_s: float = 900.0,
        settle_polls: int = 0,
    ) -> VideoPollResult:
        """Poll until the job is terminal, then `settle_polls` more times (to catch a job that
        changes its terminal state). Raises `TargetTimeout` when `timeout_s` passes first."""
        started = time.perf_counter()
        observed: list[str] = []
        polls = 0
        after_terminal = -1
        while True:
            job = await self.get_video(video_id)
            polls += 1
            observed.append(job.status)
            if job.is_terminal:
                after_terminal += 1
                if after_terminal >= settle_polls:
                    elapsed = time.perf_counter() - started
                    return VideoPollResult(job, tuple(observed), polls, elapsed)
            if time.perf_counter() - started > timeout_s:
                raise TargetTimeout(f"{self.base_url}{_video_path(video_id)}", "polling", timeout_s)
            await asyncio.sleep(interval_s)

    async def generate_video_sync(self, request: VideoCreateRequest) -> MediaResult:
        fields, files = request.to_multipart()
        return media_result(
            require_ok(await self.send_raw("POST", "/v1/videos/sync", data=fields, files=files))
        )

    async def generate_audio(self, request: AudioGenerateRequest) -> MediaResult:
        return media_result(
            require_ok(await self.send_raw("POST", "/v1/audio/generate", json=request.to_json()))
        )

    async def chat_diffusion(self, request: ChatDiffusionRequest) -> ChatImagesResult:
        raw = require_ok(
            await self.send_raw("POST", "/v1/chat/completions", json=request.to_json())
        )
        response = parse_model(ChatCompletionResponse, raw)
        images: list[bytes] = []
        for choice in response.choices:
            parts = choice.message.content if isinstance(choice.message.content, list) else []
            images.extend(
                decode_data_url(raw, part.image_url.url) for part in parts if part.image_url
            )
        return ChatImagesResult(images=tuple(images), response=response, raw=raw)


def _video_path(video_id: str, suffix: str = "") -> str:
    return f"/v1/videos/{quote(video_id, safe='')}{suffix}"
