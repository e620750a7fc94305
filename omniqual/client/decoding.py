"""Decoding of HTTP answers into the typed results: status check, JSON shape, base64 media, and
the shape of an audio body (WAV, FLAC, Ogg/Opus, MP3 via libsndfile; headerless PCM by size).

Every unusable body becomes a `TargetProtocolError` (or, for audio, an `AudioDecodeError`) that
says where it went wrong without quoting the payload.
"""

from __future__ import annotations

import base64
import binascii
import io
from dataclasses import dataclass
from typing import TypeVar

import soundfile  # type: ignore[import-untyped]
from pydantic import BaseModel, ValidationError

from omniqual.client.errors import TargetProtocolError
from omniqual.client.raw import ApiError, RawResponse
from omniqual.client.results import ImagesResult, MediaResult
from omniqual.client.schemas import ImageGenerationResponse

M = TypeVar("M", bound=BaseModel)


def require_ok(raw: RawResponse) -> RawResponse:
    if not raw.ok:
        raise ApiError(raw)
    return raw


def parse_model(model: type[M], raw: RawResponse) -> M:
    doc = raw.json()
    try:
        return model.model_validate(doc)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "<root>"
        raise TargetProtocolError(
            raw.url,
            f"HTTP {raw.status} JSON does not match {model.__name__}: "
            f"{exc.error_count()} problem(s), first at {where}: {first['msg']}",
        ) from exc


def media_result(raw: RawResponse) -> MediaResult:
    return MediaResult(content=raw.body, content_type=raw.content_type, raw=raw)


def images_result(raw: RawResponse) -> ImagesResult:
    if raw.content_type.startswith("image/"):  # response_format="file" with one image
        empty = ImageGenerationResponse(data=[])
        return ImagesResult(images=(raw.body,), response=empty, raw=raw)
    response = parse_model(ImageGenerationResponse, raw)
    images: list[bytes] = []
    for index, datum in enumerate(response.data):
        if datum.b64_json is not None:
            images.append(decode_b64(raw, datum.b64_json, f"data[{index}].b64_json"))
        elif datum.url is not None and datum.url.startswith("data:"):
            images.append(decode_data_url(raw, datum.url))
        else:
            raise TargetProtocolError(
                raw.url, f"data[{index}] carries neither b64_json nor a data URL"
            )
    return ImagesResult(images=tuple(images), response=response, raw=raw)


def decode_data_url(raw: RawResponse, url: str) -> bytes:
    head, sep, payload = url.partition(",")
    if not sep or not head.startswith("data:") or not head.endswith(";base64"):
        raise TargetProtocolError(raw.url, "image URL is not a base64 data URL")
    return decode_b64(raw, payload, "data URL")


def decode_b64(raw: RawResponse, text: str, where: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise TargetProtocolError(raw.url, f"{where} is not valid base64: {exc}") from exc


@dataclass(frozen=True, slots=True)
class AudioProbe:
    """The shape of an audio body as decoded: container, sample rate, channels, frames."""

    container: str
    sample_rate: int
    channels: int
    frames: int

    @property
    def duration_s(self) -> float:
        return self.frames / self.sample_rate if self.sample_rate else 0.0


class AudioDecodeError(ValueError):
    """The body is not audio of any container this probe knows, or does not decode."""


def audio_container(data: bytes, content_type: str) -> str | None:
    """The container by its magic bytes (headerless PCM only by its declared content type)."""
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return "wav"
    if data[:4] == b"fLaC":
        return "flac"
    if data[:4] == b"OggS":
        return "ogg"
    if data[:3] == b"ID3" or (len(data) > 1 and data[0] == 0xFF and data[1] & 0xE0 == 0xE0):
        return "mp3"
    if content_type.split(";")[0].strip() in ("audio/pcm", "audio/l16", "application/octet-stream"):
        return "pcm"
    return None


def probe_audio(
    data: bytes, content_type: str, *, pcm_rate: int | None, pcm_channels: int | None
) -> AudioProbe:
    """Decode enough of an audio body to know its shape. Headerless 16-bit PCM carries no rate
    or channel count, so the caller supplies the ones it was promised (``pcm_*``)."""
    container = audio_container(data, content_type)
    if container is None:
        raise AudioDecodeError(f"not a known audio container (content-type {content_type!r})")
    if container == "pcm":
        if not pcm_rate or not pcm_channels:
            raise AudioDecodeError("headerless PCM with no promised sample rate and channels")
        width = 2 * pcm_channels
        if len(data) % width:
            raise AudioDecodeError(f"{len(data)} PCM bytes are not whole 16-bit frames")
        return AudioProbe("pcm", pcm_rate, pcm_channels, len(data) // width)
    try:
        with soundfile.SoundFile(io.BytesIO(data)) as sound:
            frames = sound.frames
            if frames <= 0 or container == "mp3":  # MP3 frame counts are estimates: decode
                frames = len(sound.read(dtype="int16"))
            return AudioProbe(container, int(sound.samplerate), int(sound.channels), int(frames))
    except (RuntimeError, ValueError, TypeError) as exc:  # LibsndfileError is a RuntimeError
        raise AudioDecodeError(f"{container} audio does not decode ({exc})") from exc
