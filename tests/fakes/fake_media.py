"""Media and form plumbing for the fake server: seed-deterministic PNG/JPEG/WebP, WAV and MP4
bytes, and parsing of multipart or urlencoded request bodies."""

from __future__ import annotations

import hashlib
import io
import random
import struct
import wave
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from urllib.parse import parse_qs

from PIL import Image

_PIL_FORMATS = {"png": "PNG", "jpeg": "JPEG", "jpg": "JPEG", "webp": "WEBP"}


def rng_for(*parts: object) -> random.Random:
    """A generator seeded by the request's identity: same parts, same bytes."""
    digest = hashlib.sha256(repr(parts).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def make_image(width: int, height: int, fmt: str, *identity: object) -> bytes:
    """A blocky image of exactly width x height whose pixels depend only on `identity`."""
    tile = Image.frombytes("RGB", (8, 8), rng_for("image", *identity).randbytes(8 * 8 * 3))
    image = tile.resize((width, height), Image.Resampling.NEAREST)
    out = io.BytesIO()
    pil_format = _PIL_FORMATS.get(fmt, "JPEG")
    image.save(out, format=pil_format, **({"compress_level": 1} if pil_format == "PNG" else {}))
    return out.getvalue()


def perturb_image(data: bytes, levels: int, rng: random.Random) -> bytes:
    """``data`` (PNG) with every channel value moved by up to ±``levels`` (clipped)."""
    image = Image.open(io.BytesIO(data)).convert("RGB")
    moved = bytes(min(255, max(0, v + rng.randint(-levels, levels))) for v in image.tobytes())
    out = io.BytesIO()
    Image.frombytes("RGB", image.size, moved).save(out, format="PNG", compress_level=1)
    return out.getvalue()


def make_wav(seconds: float, sample_rate: int, channels: int, *identity: object) -> bytes:
    frames = max(1, round(seconds * sample_rate))
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(channels)
        wav.setsampwidth(2)
        wav.setframerate(sample_rate)
        wav.writeframes(rng_for("audio", *identity).randbytes(frames * channels * 2))
    return out.getvalue()


def make_mp4(
    num_frames: int,
    *identity: object,
    size: tuple[int, int] = (64, 64),
    sample_table: bool = True,
) -> bytes:
    """Not a playable video: an `ftyp` box, a `moov` box whose video track tells the display size
    (`tkhd`) and, with `sample_table`, one sample per frame (`stsz`), then deterministic `mdat`."""
    ftyp_payload = b"isom" + struct.pack(">I", 0x200) + b"isomiso2avc1mp41"
    ftyp = _box(b"ftyp", ftyp_payload)
    tkhd = _box(b"tkhd", b"\0" * 76 + struct.pack(">II", size[0] << 16, size[1] << 16))
    hdlr = _box(b"hdlr", b"\0" * 8 + b"vide" + b"\0" * 12)
    stsz = _box(b"stsz", b"\0" * 8 + struct.pack(">I", num_frames)) if sample_table else b""
    minf = _box(b"minf", _box(b"stbl", stsz))
    moov = _box(b"moov", _box(b"trak", tkhd + _box(b"mdia", hdlr + minf)))
    payload = rng_for("video", *identity).randbytes(512 + 64 * num_frames)
    return ftyp + moov + _box(b"mdat", payload)


def _box(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", 8 + len(payload)) + kind + payload


def image_size(data: bytes) -> tuple[int, int] | None:
    """Decoded size of an uploaded image, or None when the bytes are not an image."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.load()
            return image.size
    except Exception:  # Pillow raises many types for garbage input; all mean "not an image"
        return None


@dataclass
class FormData:
    """A parsed form: text fields and file parts, each name mapping to all its values."""

    fields: dict[str, list[str]] = field(default_factory=dict)
    files: dict[str, list[tuple[str, bytes]]] = field(default_factory=dict)

    def first(self, name: str) -> str | None:
        values = self.fields.get(name)
        return values[0] if values else None

    def text_fields(self) -> dict[str, str]:
        return {name: values[0] for name, values in self.fields.items() if values}


def parse_form(content_type: str, body: bytes) -> FormData | None:
    """Parse multipart/form-data or urlencoded bodies; None when the body is neither."""
    if content_type.startswith("application/x-www-form-urlencoded"):
        pairs = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
        return FormData(fields={k: list(v) for k, v in pairs.items()})
    if not content_type.startswith("multipart/form-data"):
        return None
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode()
    message = BytesParser(policy=HTTP).parsebytes(head + body)
    if not message.is_multipart():
        return None
    form = FormData()
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not isinstance(name, str):
            continue
        payload = part.get_payload(decode=True)
        data = payload if isinstance(payload, bytes) else b""
        filename = part.get_filename()
        if filename is not None:
            form.files.setdefault(name, []).append((filename, data))
        else:
            form.fields.setdefault(name, []).append(data.decode("utf-8", "replace"))
    return form
