"""Request serialisation, multipart encoding and error-envelope parsing of the client schemas."""

from __future__ import annotations

import base64
import json

from omniqual.client import (
    ChatDiffusionRequest,
    ImageEditRequest,
    ImageGenerationRequest,
    VideoCreateRequest,
    encode_multipart,
    parse_error_info,
)
from tests.fakes.fake_media import parse_form


def test_image_request_drops_unset_fields_and_passes_extras_through() -> None:
    request = ImageGenerationRequest(prompt="p", seed=0, layers=4)
    assert request.to_json() == {"prompt": "p", "seed": 0, "layers": 4}


def test_edit_request_sends_each_image_as_an_image_part_and_urls_repeated() -> None:
    request = ImageEditRequest(prompt="p", images=[b"a", b"b"], urls=["data:x", "data:y"], n=2)
    fields, files = request.to_multipart()
    assert fields == {"prompt": "p", "n": "2", "url": ["data:x", "data:y"]}
    assert [(name, part[0], part[1]) for name, part in files] == [
        ("image", "image_0.png", b"a"),
        ("image", "image_1.png", b"b"),
    ]


def test_video_form_serialises_dicts_as_json_and_bools_lowercase() -> None:
    request = VideoCreateRequest(
        prompt="p",
        extra_params={"preencode_mp4": True},
        input_reference=b"ref",
        enable_frame_interpolation=True,
    )
    fields, files = request.to_multipart()
    assert json.loads(str(fields["extra_params"])) == {"preencode_mp4": True}
    assert fields["enable_frame_interpolation"] == "true"
    assert files == [("input_reference", ("reference.png", b"ref", "image/png"))]


def test_chat_request_builds_one_user_message_with_data_url_images() -> None:
    body = ChatDiffusionRequest(
        prompt="a cat", model="m", images=[b"\x89PNG"], extra_body={"seed": 3}
    ).to_json()
    content = body["messages"][0]["content"]
    assert body["messages"][0]["role"] == "user" and body["model"] == "m"
    assert content[0] == {"type": "text", "text": "a cat"}
    url = content[1]["image_url"]["url"]
    assert url == "data:image/png;base64," + base64.b64encode(b"\x89PNG").decode()
    assert body["extra_body"] == {"seed": 3}


def test_multipart_round_trips_through_a_standard_parser() -> None:
    body, content_type = encode_multipart(
        {"prompt": 'say "hi"\nnow', "n": 2, "tag": ["a", "b"]},
        [("image", ("x.png", b"\x00\x01binary", "image/png"))],
    )
    form = parse_form(content_type, body)
    assert form is not None
    assert form.fields == {"prompt": ['say "hi"\nnow'], "n": ["2"], "tag": ["a", "b"]}
    assert form.files == {"image": [("x.png", b"\x00\x01binary")]}


def test_error_envelope_parsing() -> None:
    full = parse_error_info(
        b'{"error": {"message": "bad n", "type": "Bad Request", "param": "n", "code": 400}}'
    )
    assert full is not None and (full.shape, full.param, full.code) == ("error", "n", 400)
    detail = parse_error_info(b'{"detail": "nope"}')
    assert detail is not None and (detail.shape, detail.message) == ("detail", "nope")
    assert parse_error_info(b"Internal Server Error") is None
    assert parse_error_info(b"[1, 2]") is None
    assert parse_error_info(b'{"status": "unhealthy"}') is None
    assert parse_error_info(b'{"error": "a string"}') is None
