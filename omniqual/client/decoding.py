"""Decoding of HTTP answers into the typed results: status check, JSON shape, base64 media.

Every unusable body becomes a `TargetProtocolError` that says where it went wrong without
quoting the payload.
"""

from __future__ import annotations

import base64
import binascii
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from omniqual.client.errors import ApiError, TargetProtocolError
from omniqual.client.results import ImagesResult, MediaResult, RawResponse
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
