"""Immutable values the client hands back: the typed call results (each carries the raw HTTP
answer, `raw.RawResponse`).

These are hot in-memory values (a load run produces thousands), so they are frozen slotted
dataclasses; the parsed wire shapes inside them are the pydantic models of `schemas`.
"""

from __future__ import annotations

from dataclasses import dataclass

from omniqual.client.raw import RawResponse
from omniqual.client.schemas import ChatCompletionResponse, ImageGenerationResponse, VideoJob


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
