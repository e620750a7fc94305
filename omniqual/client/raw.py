"""One HTTP answer as the client keeps it, whatever its status, and `ApiError`, what a typed call
raises for an answer with an error status.

Apart from `errors` so that the transport failures need nothing of the answers: this module
imports `errors` (an unusable body is a `TargetProtocolError`), never the other way round.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from omniqual.client.errors import ClientError, TargetProtocolError
from omniqual.client.schemas import ErrorInfo

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



class ApiError(ClientError):
    """A typed call received an HTTP error status; carries the status and the parsed envelope."""

    def __init__(self, raw: RawResponse) -> None:
        self.raw = raw
        self.status: int = raw.status
        self.error: ErrorInfo | None = raw.error
        # The server's message can quote request values (pydantic puts `input_value=` in it),
        # and exception texts end up in logs, so only the shape of the error is in str(self).
        if raw.error is None:
            detail = "no error envelope"
        else:
            detail = f"type={raw.error.type!r} param={raw.error.param!r} code={raw.error.code!r}"
        super().__init__(f"{raw.method} {raw.path} -> HTTP {raw.status} ({detail})")
