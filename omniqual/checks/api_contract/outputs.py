"""Output checks for accepted cases: pull the media out of an answer and verify its shape against
what the request asked for (images via Pillow; audio decoded whatever its container, see
``omniqual.client.decoding.probe_audio``; MP4 by box parse: resolution and frame count, and the
codec and frame rate where the contract declares them).

Problems come back as short strings; payload bytes are never quoted.
"""

import base64
import binascii
import io
import json
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from PIL import Image, UnidentifiedImageError
from pydantic import JsonValue

from omniqual.checks.api_contract.cases import parse_size
from omniqual.checks.api_contract.mp4 import Mp4Video, mp4_video
from omniqual.client.decoding import AudioDecodeError, probe_audio
from omniqual.domain.contract import EndpointContract

_PIL_FORMAT = {"png": "PNG", "jpeg": "JPEG", "jpg": "JPEG", "webp": "WEBP"}
_AUDIO_CONTAINER = {"opus": "ogg"}  # the other response_format names are their containers


@dataclass(frozen=True, slots=True)
class Expected:
    count: int = 1
    size: tuple[int, int] | None = None
    image_format: str | None = None
    frames: int | None = None
    length_s: float | None = None
    audio_format: str | None = None
    codec: str | None = None
    fps: float | None = None
    fps_tolerance: float = 0.01


def expected_output(endpoint: EndpointContract, values: Mapping[str, JsonValue]) -> Expected:
    """The output the contract promises for these request values (alignment applied)."""
    out = endpoint.output

    def value(name: str | None) -> JsonValue:
        return values.get(name) if name is not None else None

    count = value(out.count_field)
    size = value(out.size_field)
    fmt = value(out.format_field)
    frames = value(out.frames_field)
    length = value(out.length_field)
    speed = value(out.speed_field)
    if isinstance(length, int | float) and isinstance(speed, int | float) and speed > 0:
        length = length / speed  # vLLM-Omni time-stretches the clip by the requested speed
    size_spec = endpoint.field(out.size_field) if out.size_field else None
    frames_spec = endpoint.field(out.frames_field) if out.frames_field else None
    shape: tuple[int, int] | None = None
    if isinstance(size, str):
        width, height = parse_size(size)
        if size_spec is not None:
            width, height = size_spec.floor_aligned(width), size_spec.floor_aligned(height)
        shape = (width, height)
    n_frames = int(frames) if isinstance(frames, int | float) else None
    if n_frames is not None and frames_spec is not None:
        n_frames = frames_spec.floor_aligned(n_frames)
    image_fmt = fmt if isinstance(fmt, str) and out.kind == "image" else None
    fps = value(out.fps_field)
    rate = float(fps) if isinstance(fps, int | float) and not isinstance(fps, bool) else None
    return Expected(
        count=int(count) if isinstance(count, int | float) else 1,
        size=shape,
        image_format=_PIL_FORMAT.get(image_fmt.lower(), image_fmt.upper()) if image_fmt else None,
        audio_format=fmt.lower() if isinstance(fmt, str) and out.kind == "audio" else None,
        frames=n_frames,
        length_s=float(length) if isinstance(length, int | float) else None,
        codec=out.codec,
        fps=rate if rate is not None else out.default_fps,
        fps_tolerance=out.fps_tolerance,
    )


def extract_images(body: bytes, content_type: str) -> tuple[list[bytes], str | None]:
    """Images from an images/chat answer: raw image, ZIP, ``data[].b64_json`` or chat data URLs."""
    if content_type.startswith("image/"):
        return [body], None
    if content_type == "application/zip":
        with zipfile.ZipFile(io.BytesIO(body)) as archive:
            return [archive.read(name) for name in archive.namelist()], None
    try:
        doc = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return [], f"answer is neither an image nor JSON (content-type {content_type!r})"
    encoded = [*_b64_items(doc), *_chat_items(doc)]
    try:
        return [base64.b64decode(item, validate=True) for item in encoded], None
    except (binascii.Error, ValueError):
        return [], "an image in the answer is not valid base64"


def _b64_items(doc: object) -> Iterator[str]:
    data = doc.get("data") if isinstance(doc, dict) else None
    for item in data if isinstance(data, list) else []:
        if isinstance(item, dict) and isinstance(item.get("b64_json"), str):
            yield item["b64_json"]


def _chat_items(doc: object) -> Iterator[str]:
    choices = doc.get("choices") if isinstance(doc, dict) else None
    for choice in choices if isinstance(choices, list) else []:
        message = choice.get("message") if isinstance(choice, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        for part in content if isinstance(content, list) else []:
            url = part.get("image_url", {}).get("url") if isinstance(part, dict) else None
            if isinstance(url, str) and url.startswith("data:") and "," in url:
                yield url.partition(",")[2]


def check_images(images: list[bytes], expected: Expected) -> list[str]:
    problems = []
    if len(images) != expected.count:
        problems.append(f"{len(images)} image(s) returned, {expected.count} requested")
    for index, data in enumerate(images):
        try:
            with Image.open(io.BytesIO(data)) as image:
                image.load()
                size, fmt = image.size, image.format
        except (UnidentifiedImageError, OSError, ValueError):
            problems.append(f"image {index} does not decode")
            continue
        if expected.size is not None and size != expected.size:
            problems.append(
                f"image {index} is {size[0]}x{size[1]}, "
                f"expected {expected.size[0]}x{expected.size[1]}"
            )
        if expected.image_format is not None and fmt != expected.image_format:
            problems.append(f"image {index} is {fmt}, {expected.image_format} requested")
    return problems


def decoded_pixels(data: bytes) -> tuple[str, tuple[int, int], bytes] | None:
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.load()
            return image.mode, image.size, image.tobytes()
    except (UnidentifiedImageError, OSError, ValueError):
        return None


def check_audio(
    data: bytes,
    content_type: str,
    expected: Expected,
    sample_rate: int | None,
    channels: int | None,
    tolerance_s: float,
) -> list[str]:
    """Every container is decoded (WAV, FLAC, Ogg/Opus, MP3; PCM by its size at the promised
    rate and channels) and its sample rate, channels and duration are checked."""
    if not data:
        return ["empty audio body"]
    try:
        probe = probe_audio(data, content_type, pcm_rate=sample_rate, pcm_channels=channels)
    except AudioDecodeError as exc:
        return [f"audio does not decode: {exc}"]
    problems = []
    wanted = _AUDIO_CONTAINER.get(expected.audio_format or "", expected.audio_format)
    if wanted is not None and probe.container != wanted:
        problems.append(f"{probe.container} audio returned, {expected.audio_format} requested")
    if sample_rate is not None and probe.sample_rate != sample_rate:
        problems.append(f"sample rate {probe.sample_rate}, contract says {sample_rate}")
    if channels is not None and probe.channels != channels:
        problems.append(f"{probe.channels} channel(s), contract says {channels}")
    if expected.length_s is not None and abs(probe.duration_s - expected.length_s) > tolerance_s:
        problems.append(f"{probe.duration_s:.3f} s of audio, {expected.length_s:g} s requested")
    return problems


def check_video(data: bytes, expected: Expected) -> list[str]:
    """Resolution and frame count are always checked: a box that would tell them and is not
    there is a failure with its reason, never a silent pass."""
    if len(data) < 8 or data[4:8] != b"ftyp":
        return [f"not an MP4 ({len(data)} bytes, no leading ftyp box)"]
    video = mp4_video(data)
    if video is None:
        return ["MP4 has no moov box with a video track: resolution and frame count unverifiable"]
    problems = []
    if video.frames is None:
        problems.append("MP4 video track has no stsz box: frame count unverifiable")
    elif expected.frames is not None and video.frames != expected.frames:
        problems.append(f"{video.frames} frame(s) in the MP4, {expected.frames} expected")
    if video.size is None:
        problems.append("MP4 video track has no tkhd size: resolution unverifiable")
    elif expected.size is not None and video.size != expected.size:
        width, height = video.size
        problems.append(f"MP4 is {width}x{height}, expected {expected.size[0]}x{expected.size[1]}")
    return problems + _container_problems(video, expected)


def _container_problems(video: Mp4Video, expected: Expected) -> list[str]:
    """Codec and frame rate, where the contract declares them (SKILL G0-27)."""
    problems = []
    if expected.codec is not None:
        if video.fourcc is None:
            problems.append("MP4 video track has no stsd sample entry: codec unverifiable")
        elif video.codec != expected.codec:
            problems.append(f"MP4 codec {video.fourcc} ({video.codec}), contract says "
                            f"{expected.codec}")  # fmt: skip
    if expected.fps is not None:
        fps = video.fps
        if fps is None:
            problems.append("MP4 video track has no mdhd timescale or stts durations: frame "
                            "rate unverifiable")  # fmt: skip
        elif abs(fps - expected.fps) > expected.fps_tolerance:
            problems.append(f"MP4 plays at {fps:.3f} fps, {expected.fps:g} fps expected")
    return problems
