"""The fake server validates like the real one: 400 + envelope naming the field, 422 for an
edit without input, 413 for an oversized upload, 404/405 for unknown routes; invalid async
requests create no job; unknown fields are ignored."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pytest
from PIL import Image

from omniqual.client import OmniClient
from tests.fakes import FakeConfig, FakeOmni

Drive = Callable[..., Any]
GEN = "/v1/images/generations"


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (32, 32)).save(out, format="PNG")
    return out.getvalue()


@pytest.mark.parametrize(
    ("body", "param", "needle"),
    [
        ({"prompt": "p", "n": 0}, "n", "greater_than_equal"),
        ({"prompt": "p", "n": 11}, "n", "less_than_equal"),
        ({"prompt": "p", "n": "abc"}, "n", "int_parsing"),
        ({"prompt": "p", "size": "64x65"}, "size", "multiple of 16"),
        ({"prompt": "p", "size": "8x16"}, "size", "between 16 and 2048"),
        ({"prompt": "p", "size": "4096x64"}, "size", "between 16 and 2048"),
        ({"prompt": "p", "size": "huge"}, "size", "WIDTHxHEIGHT"),
        ({"prompt": "p", "num_inference_steps": 0}, "num_inference_steps", "greater_than"),
        ({"prompt": "p", "num_inference_steps": 201}, "num_inference_steps", "less_than"),
        ({"prompt": "p", "guidance_scale": 20.5}, "guidance_scale", "less_than_equal"),
        ({"n": 1}, "prompt", "missing"),
        ({"prompt": 5}, "prompt", "string_type"),
        ({"prompt": "p", "response_format": "url"}, "response_format", "literal_error"),
        ({"prompt": "p", "model": "other"}, "model", "Model mismatch"),
        ([1, 2], None, "model_type"),
    ],
)
def test_image_generation_rejections(
    drive: Drive, body: Any, param: str | None, needle: str
) -> None:
    raw = drive(lambda c: c.send_raw("POST", GEN, json=body))
    assert raw.status == 400
    assert raw.error is not None and raw.error.shape == "error"
    assert needle in raw.error.message
    if param is not None:
        assert raw.error.param == param and param in raw.error.message.lower()


def test_unknown_fields_are_ignored(drive: Drive) -> None:
    raw = drive(lambda c: c.send_raw("POST", GEN, json={"prompt": "p", "no_such_knob": 1}))
    assert raw.status == 200


@pytest.mark.parametrize(
    ("content", "content_type", "needle"),
    [(b'{"prompt": ', "application/json", "JSON decode"), (b"prompt=p", "text/plain", "content")],
)
def test_bad_json_bodies(drive: Drive, content: bytes, content_type: str, needle: str) -> None:
    raw = drive(
        lambda c: c.send_raw("POST", GEN, content=content, headers={"Content-Type": content_type})
    )
    assert raw.status == 400 and raw.error is not None and needle in raw.error.message


def test_edit_rejections(drive: Drive) -> None:
    async def scenario(c: OmniClient) -> list[Any]:
        png = ("image", ("a.png", _png(), "image/png"))
        return [
            await c.send_raw("POST", "/v1/images/edits", data={"prompt": "p"}),
            await c.send_raw("POST", "/v1/images/edits", data={"prompt": "p"}, files=[png, png]),
            await c.send_raw(
                "POST",
                "/v1/images/edits",
                data={"prompt": "p"},
                files=[("image", ("a.png", b"not an image", "image/png"))],
            ),
            await c.send_raw("POST", "/v1/images/edits", data={"n": "1"}, files=[png]),
            await c.send_raw(
                "POST",
                "/v1/images/edits",
                data={"prompt": "p", "response_format": "url"},
                files=[png],
            ),
        ]

    no_input, two, garbage, no_prompt, url_format = drive(scenario)
    assert no_input.status == 422 and "'image' or 'url'" in no_input.error.message
    assert two.status == 400 and "At most 1" in two.error.message
    assert garbage.status == 400 and "Failed to open" in garbage.error.message
    assert no_prompt.status == 400 and no_prompt.error.param == "prompt"
    assert url_format.status == 400 and url_format.error.param == "response_format"


@pytest.mark.parametrize(
    ("fields", "param", "needle"),
    [
        ({"prompt": "p", "seconds": "0"}, "seconds", "string_pattern_mismatch"),
        ({"prompt": "p", "size": "64x64x"}, "size", "string_pattern_mismatch"),
        ({"prompt": "p", "width": "65"}, "width", "multiple of 16"),
        ({"prompt": "p", "num_frames": "0"}, "num_frames", "greater_than_equal"),
        ({"prompt": "p", "fps": "x"}, "fps", "int_parsing"),
        ({"prompt": "p", "extra_params": "[1]"}, "extra_params", "expected dict"),
        ({"prompt": "p", "boundary_ratio": "2"}, "boundary_ratio", "less_than_equal"),
        ({"seconds": "4"}, "prompt", "missing"),
    ],
)
def test_video_rejections_create_no_job(
    drive: Drive, fake: FakeOmni, fields: dict[str, str], param: str, needle: str
) -> None:
    raw = drive(lambda c: c.send_raw("POST", "/v1/videos", data=fields))
    assert raw.status == 400 and raw.error is not None
    assert raw.error.param == param and needle in raw.error.message
    assert fake.state.jobs == {}


def test_audio_and_chat_rejections(drive: Drive) -> None:
    async def scenario(c: OmniClient) -> list[Any]:
        audio = "/v1/audio/generate"
        return [
            await c.send_raw("POST", audio, json={"input": "x", "audio_length": 100}),
            await c.send_raw("POST", audio, json={"input": "x", "response_format": "ogg"}),
            await c.send_raw("POST", audio, json={"input": "x", "model": "nope"}),
            await c.send_raw("POST", "/v1/chat/completions", json={"messages": []}),
        ]

    too_long, fmt, model, no_prompt = drive(scenario)
    assert too_long.status == 400 and too_long.error.param == "audio_length"
    assert fmt.status == 400 and fmt.error.param == "response_format"
    assert model.status == 404 and "does not exist" in model.error.message
    assert no_prompt.status == 400 and "No text prompt" in no_prompt.error.message


def test_list_query_rejections(drive: Drive) -> None:
    async def scenario(c: OmniClient) -> list[int]:
        queries: list[dict[str, str | int]] = [
            {"limit": 101},
            {"order": "sideways"},
            {"limit": "x"},
        ]
        return [(await c.send_raw("GET", "/v1/videos", params=q)).status for q in queries]

    assert drive(scenario) == [400, 400, 400]


def test_unknown_route_and_method(drive: Drive) -> None:
    async def scenario(c: OmniClient) -> tuple[int, int, int]:
        return (
            (await c.send_raw("GET", "/v1/nothing")).status,
            (await c.send_raw("GET", GEN)).status,
            (await c.send_raw("GET", "/v1/videos/unknown-id")).status,
        )

    assert drive(scenario) == (404, 405, 404)


def test_oversized_upload_is_413_with_envelope(run: Drive) -> None:
    fake = FakeOmni(FakeConfig(max_upload_bytes=1000))
    files = [("image", ("a.png", b"x" * 2000, "image/png"))]
    raw = run(
        fake, lambda c: c.send_raw("POST", "/v1/images/edits", data={"prompt": "p"}, files=files)
    )
    assert raw.status == 413 and raw.error is not None and "exceeds" in raw.error.message
