"""Output checks for accepted cases: pull the media out of an answer and verify its shape against
what the request asked for (PNG via Pillow, WAV via ``wave``, MP4 by box parse: ``ftyp`` and,
where the sample table is there, the video frame count).

Problems come back as short strings; payload bytes are never quoted.
"""

import base64
import binascii
import io
import json
import struct
import wave
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from PIL import Image, UnidentifiedImageError
from pydantic import JsonValue

from omniqual.checks.api_contract.cases import parse_size
from omniqual.domain.contract import EndpointContract

_PIL_FORMAT = {"png": "PNG", "jpeg": "JPEG", "jpg": "JPEG", "webp": "WEBP"}


@dataclass(frozen=True, slots=True)
class Expected:
    count: int = 1
    size: tuple[int, int] | None = None
    image_format: str | None = None
    frames: int | None = None
    length_s: float | None = None


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
    return Expected(
        count=int(count) if isinstance(count, int | float) else 1,
        size=shape,
        image_format=_PIL_FORMAT.get(fmt.lower(), fmt.upper()) if isinstance(fmt, str) else None,
        frames=n_frames,
        length_s=float(length) if isinstance(length, int | float) else None,
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
    if not data:
        return ["empty audio body"]
    if data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        return []  # another declared format: only non-empty is checked (no decoder here)
    try:
        with wave.open(io.BytesIO(data)) as wav:
            rate, chans, frames = wav.getframerate(), wav.getnchannels(), wav.getnframes()
    except (wave.Error, EOFError):
        return ["WAV does not decode"]
    problems = []
    if sample_rate is not None and rate != sample_rate:
        problems.append(f"sample rate {rate}, contract says {sample_rate}")
    if channels is not None and chans != channels:
        problems.append(f"{chans} channel(s), contract says {channels}")
    if expected.length_s is not None and rate > 0:
        seconds = frames / rate
        if abs(seconds - expected.length_s) > tolerance_s:
            problems.append(f"{seconds:.3f} s of audio, {expected.length_s:g} s requested")
    return problems


def check_video(data: bytes, expected: Expected) -> list[str]:
    if len(data) < 8 or data[4:8] != b"ftyp":
        return [f"not an MP4 ({len(data)} bytes, no leading ftyp box)"]
    frames = mp4_video_frames(data)
    if expected.frames is not None and frames is not None and frames != expected.frames:
        return [f"{frames} frame(s) in the MP4, {expected.frames} expected"]
    return []


def _boxes(data: bytes, start: int, end: int) -> Iterator[tuple[bytes, int, int]]:
    """(type, payload start, box end) of the boxes in data[start:end]."""
    pos = start
    while pos + 8 <= end:
        size, kind = struct.unpack(">I4s", data[pos : pos + 8])
        header = 8
        if size == 1 and pos + 16 <= end:
            size, header = struct.unpack(">Q", data[pos + 8 : pos + 16])[0], 16
        elif size == 0:
            size = end - pos
        if size < header or pos + size > end:
            return
        yield kind, pos + header, pos + size
        pos += size


def _child(data: bytes, start: int, end: int, kind: bytes) -> tuple[int, int] | None:
    return next(((s, e) for k, s, e in _boxes(data, start, end) if k == kind), None)


def mp4_video_frames(data: bytes) -> int | None:
    """Sample count of the first video track (moov/trak/mdia/minf/stbl/stsz); None if absent."""
    moov = _child(data, 0, len(data), b"moov")
    if moov is None:
        return None
    for kind, start, end in _boxes(data, *moov):
        mdia = _child(data, start, end, b"mdia") if kind == b"trak" else None
        hdlr = _child(data, *mdia, b"hdlr") if mdia else None
        if mdia is None or hdlr is None or data[hdlr[0] + 8 : hdlr[0] + 12] != b"vide":
            continue
        minf = _child(data, *mdia, b"minf")
        stbl = _child(data, *minf, b"stbl") if minf else None
        stsz = _child(data, *stbl, b"stsz") if stbl else None
        if stsz is not None and stsz[0] + 12 <= stsz[1]:
            return int(struct.unpack(">I", data[stsz[0] + 8 : stsz[0] + 12])[0])
    return None
