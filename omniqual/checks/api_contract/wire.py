"""A case on the wire: the HTTP request for each API mode and the upload fixtures.

JSON modes send the field values as the body; multipart modes send them as form text (dicts as
JSON text, the way vLLM-Omni reads ``extra_params``); chat sends the prompt (and any reference
images) as one user message and every other field in ``extra_body``.
"""

import base64
import io
import json
import struct
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from PIL import Image
from PIL.PngImagePlugin import PngInfo
from pydantic import JsonValue

from omniqual.checks.api_contract.cases import Case, UploadFile
from omniqual.client import FilePart
from omniqual.domain.contract import ENDPOINT_PATHS, MULTIPART_MODES

PROMPT_FIELD = "prompt"
CHAT_ENVELOPE = "extra_body"
"""Where a chat request carries every contract field but its prompt."""
_FILE_EXT = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "video/mp4": "mp4"}


@dataclass(frozen=True, slots=True)
class WireRequest:
    method: str
    path: str
    json: Any = None
    data: Mapping[str, str] | None = None
    files: tuple[FilePart, ...] = ()

    @property
    def uses_json(self) -> bool:
        return self.data is None and not self.files


@cache
def fixture_png() -> bytes:
    """A 64x64 RGB PNG with a deterministic pattern (the reference image of every upload)."""
    image = Image.new("RGB", (64, 64))
    image.putdata(
        [((x * 4) % 256, (y * 4) % 256, ((x + y) * 2) % 256) for y in range(64) for x in range(64)]
    )
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def marked_png(marker: str) -> bytes:
    """The fixture image with ``marker`` in a tEXt chunk ahead of its pixels: still a valid PNG,
    whose bytes, and base64, carry a string no other request sends."""
    info = PngInfo()
    info.add_text("Comment", marker)
    out = io.BytesIO()
    with Image.open(io.BytesIO(fixture_png())) as image:
        image.save(out, format="PNG", pnginfo=info)
    return out.getvalue()


def huge_header_png(side: int) -> bytes:
    """A PNG whose header declares ``side`` x ``side`` RGB pixels over a few bytes of image data:
    it opens (the header is valid) and only decoding would find it short. Pillow's own bomb
    guard is not what a server's pixel cap may rely on."""

    def chunk(kind: bytes, payload: bytes) -> bytes:
        crc = zlib.crc32(kind + payload) & 0xFFFFFFFF
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    body = zlib.compress(b"\0" * 64)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", body) + chunk(b"IEND", b"")
    )


def file_bytes(upload: UploadFile) -> bytes:
    if upload.content == "huge-header-png":
        return huge_header_png(upload.side)
    if upload.content == "marked-png":
        return marked_png(upload.marker)
    if upload.content == "not-image":
        return b"%PDF-1.4\n%omniqual fixture: not an image\n" + b"0" * 256 + b"\n%%EOF\n"
    png = fixture_png()
    if upload.content == "oversize-png":
        # A valid image followed by padding: only a byte cap can reject it, decoding cannot.
        return png + b"\0" * max(0, upload.size - len(png))
    return png


def form_text(value: JsonValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def build_request(case: Case) -> WireRequest:
    path = ENDPOINT_PATHS[case.api_mode]
    if case.api_mode == "chat-completions":
        return WireRequest("POST", path, json=chat_body(case.values, case.files))
    if case.api_mode in MULTIPART_MODES:
        data = {k: form_text(v) for k, v in case.values.items() if v is not None}
        parts: list[FilePart] = []
        for index, upload in enumerate(case.files):
            name = f"{upload.field}_{index}.{_FILE_EXT.get(upload.media_type, 'bin')}"
            parts.append((upload.field, (name, file_bytes(upload), upload.media_type)))
        return WireRequest("POST", path, data=data, files=tuple(parts))
    return WireRequest("POST", path, json=dict(case.values))


def chat_body(values: Mapping[str, JsonValue], files: tuple[UploadFile, ...]) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    prompt = values.get(PROMPT_FIELD)
    if prompt is not None:
        content.append({"type": "text", "text": prompt})
    for upload in files:
        encoded = base64.b64encode(file_bytes(upload)).decode()
        url = f"data:{upload.media_type};base64,{encoded}"
        content.append({"type": "image_url", "image_url": {"url": url}})
    extra = {k: v for k, v in values.items() if k != PROMPT_FIELD}
    return {"messages": [{"role": "user", "content": content}], CHAT_ENVELOPE: extra}
