"""Immutable values the client hands back: the raw HTTP answer and the typed call results.

These are hot in-memory values (a load run produces thousands), so they are frozen slotted
dataclasses; the parsed wire shapes inside them are the pydantic models of `schemas`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from omniqual.client.errors import TargetProtocolError
from omniqual.client.schemas import (
    ChatCompletionResponse,
    ErrorInfo,
    ImageGenerationResponse,
    VideoJob,
)

# Headers worth keeping for the gates; everything else (cookies, auth echoes) is dropped.
KEPT_HEADERS = frozenset(
    {
        "content-type",
        "content-length",
        "content-disposition",
        "retry-after",
        "server",
        "date",
        "connection",
    }
)
REQUEST_ID_HEADERS = ("x-request-id", "request-id", "x-vllm-request-id")


def keep_header(name: str) -> bool:
    lowered = name.lower()
    return lowered in KEPT_HEADERS or lowered.startswith("x-")


@dataclass(frozen=True, slots=True)
class RawResponse:
    """One HTTP answer, whatever its status. `headers` keys are lower-case."""

    method: str
    path: str
    url: str
    status: int
    headers: Mapping[str, str]
    body: bytes
    elapsed_s: float
    content_type: str
    error: ErrorInfo | None

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def request_id(self) -> str | None:
        for name in REQUEST_ID_HEADERS:
            if name in self.headers:
                return self.headers[name]
        return None

    @property
    def inference_time_s(self) -> float | None:
        value = self.headers.get("x-inference-time-s")
        try:
            return None if value is None else float(value)
        except ValueError:
            return None

    @property
    def stage_durations(self) -> dict[str, Any] | None:
        value = self.headers.get("x-stage-durations")
        if value is None:
            return None
        try:
            parsed = json.loads(value)
        except ValueError:
            return None
        return parsed if isinstance(parsed, dict) else None

    @property
    def peak_memory_mb(self) -> float | None:
        value = self.headers.get("x-peak-memory-mb")
        try:
            return None if value is None else float(value)
        except ValueError:
            return None

    def json(self) -> Any:
        """The body as JSON; `TargetProtocolError` if it is not JSON."""
        try:
            return json.loads(self.body)
        except (ValueError, UnicodeDecodeError) as exc:
            excerpt = self.body[:40].decode("utf-8", "replace")
            raise TargetProtocolError(
                self.url,
                f"HTTP {self.status} body is not JSON (content-type {self.content_type!r}, "
                f"{len(self.body)} bytes, starts {excerpt!r}): {exc}",
            ) from exc


@dataclass(frozen=True, slots=True)
class HealthResult:
    status: int
    healthy: bool
    raw: RawResponse


@dataclass(frozen=True, slots=True)
class ImagesResult:
    """Decoded images (encoded bytes, PNG unless `output_format` said otherwise)."""

    images: tuple[bytes, ...]
    response: ImageGenerationResponse
    raw: RawResponse


@dataclass(frozen=True, slots=True)
class ChatImagesResult:
    images: tuple[bytes, ...]
    response: ChatCompletionResponse
    raw: RawResponse


@dataclass(frozen=True, slots=True)
class MediaResult:
    """Raw media bytes (video/mp4, audio/wav, ...) from a binary endpoint."""

    content: bytes
    content_type: str
    raw: RawResponse

    @property
    def looks_like_mp4(self) -> bool:
        return self.content[4:8] == b"ftyp"

    @property
    def looks_like_wav(self) -> bool:
        return self.content[:4] == b"RIFF" and self.content[8:12] == b"WAVE"


@dataclass(frozen=True, slots=True)
class VideoPollResult:
    """The last job state seen by `OmniClient.wait_video` and every status observed on the way
    (a job that reports two terminal states shows up here)."""

    final: VideoJob
    observed: tuple[str, ...]
    polls: int
    elapsed_s: float


@dataclass(frozen=True, slots=True)
class DisconnectOutcome:
    """What happened to a request the client abandoned after `after_s` seconds.

    `answered` is True when the response arrived before the cut (then `status` is set and the
    connection was not dropped); otherwise the connection was closed mid-request."""

    answered: bool
    status: int | None
    elapsed_s: float
