"""multipart/form-data encoding for the API's form endpoints.

httpx falls back to urlencoded forms when no file is attached; vLLM-Omni's form routes are
documented as multipart, so the client always encodes forms itself, the same way every time.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from typing import Any

from omniqual.client.schemas import form_value

FilePart = tuple[str, tuple[str, bytes, str]]


def encode_multipart(
    fields: Mapping[str, Any] | None, files: Sequence[FilePart] | None
) -> tuple[bytes, str]:
    """Return (body, content-type header). A list value repeats its field name."""
    boundary = f"omniqual-{secrets.token_hex(12)}"
    chunks: list[bytes] = []
    for name, value in (fields or {}).items():
        for item in value if isinstance(value, list | tuple) else [value]:
            chunks.append(_part_head(boundary, f'form-data; name="{_quote(name)}"', None))
            chunks.append(form_value(item).encode("utf-8") + b"\r\n")
    for name, (filename, data, content_type) in files or ():
        disposition = f'form-data; name="{_quote(name)}"; filename="{_quote(filename)}"'
        chunks.append(_part_head(boundary, disposition, content_type))
        chunks.append(data + b"\r\n")
    chunks.append(f"--{boundary}--\r\n".encode())
    return b"".join(chunks), f"multipart/form-data; boundary={boundary}"


def _part_head(boundary: str, disposition: str, content_type: str | None) -> bytes:
    head = f"--{boundary}\r\nContent-Disposition: {disposition}\r\n"
    if content_type is not None:
        head += f"Content-Type: {content_type}\r\n"
    return (head + "\r\n").encode("utf-8")


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\r", "").replace("\n", "")
