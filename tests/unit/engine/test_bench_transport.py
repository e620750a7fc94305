"""How the bench transport encodes a request and judges an answer (no sockets)."""

from __future__ import annotations

import dataclasses
import re

import pytest

from omniqual.checks.synthetic_inputs import request_prompt
from omniqual.engine.bench.transport import Http1Send, judge
from omniqual.loadgen.records import OutcomeStatus
from omniqual.loadgen.workload import EndpointKind, PlannedRequest, RequestParams

JSON = "application/json"


def test_an_image_answer_with_data_is_ok_and_keeps_the_peak_memory() -> None:
    body = b'{"data":[{"b64_json":"AA=="}],"metrics":{"peak_memory_mb":512.5}}'
    outcome = judge(EndpointKind.IMAGE, 200, JSON, body)
    assert outcome.status is OutcomeStatus.OK and outcome.peak_memory_mb == 512.5


def test_errors_empty_output_and_bad_json_are_errors() -> None:
    assert judge(EndpointKind.IMAGE, 503, JSON, b"{}").error_kind == "http_503"
    assert judge(EndpointKind.IMAGE, 200, JSON, b'{"data":[]}').error_kind == "empty_output"
    assert judge(EndpointKind.IMAGE, 200, JSON, b"{nope").error_kind == "invalid_json"
    assert judge(EndpointKind.IMAGE, 200, "text/html", b"<p>").error_kind == "not_json"
    assert judge(EndpointKind.AUDIO, 200, "audio/wav", b"").error_kind == "empty_output"


def test_a_media_answer_is_ok_without_json() -> None:
    outcome = judge(EndpointKind.VIDEO_SYNC, 200, "video/mp4", b"\x00\x00\x00\x18ftyp")
    assert outcome.status is OutcomeStatus.OK


@pytest.mark.parametrize("kind", [k for k in EndpointKind if k is not EndpointKind.VIDEO_ASYNC])
def test_a_templated_request_is_byte_for_byte_the_request_encoded_whole(
    kind: EndpointKind,
) -> None:
    """``prepare`` encodes a shape once with a marker seed and splices each seed in: every
    request must be exactly what encoding it whole gives (multipart boundaries are random per
    encoding, so they are compared by position), for seeds of every length and both prompts."""
    send = Http1Send("http://127.0.0.1:9")
    params = RequestParams(64, 48, 5, 3, 6, 2.5, 0, (("negative_prompt", "blur"),))
    prompts = set()
    for seed in (0, 7, 1234, 2**31 - 1, 15, 16):
        planned = PlannedRequest(3, 0.0, "e", "t2i", kind, dataclasses.replace(params, seed=seed))
        fast, whole = send.prepare(planned), send._encode(planned)
        assert _unbound(fast) == _unbound(whole)
        head, _, body = fast.partition(b"\r\n\r\n")
        assert f"Content-Length: {len(body)}\r\n".encode() in head + b"\r\n"
        assert str(seed).encode() in body
        prompts.add(request_prompt(planned))
    assert len(send._templates) == len(prompts)  # one encoding per shape and prompt


def test_an_unseeded_request_is_encoded_whole() -> None:
    send = Http1Send("http://127.0.0.1:9")
    params = RequestParams(64, 64, 1, 2, 6, None, None, ())
    planned = PlannedRequest(0, 0.0, "e", "t2i", EndpointKind.IMAGE, params)
    assert send.prepare(planned) == send._encode(planned) and not send._templates


def _unbound(raw: bytes) -> bytes:
    """``raw`` with its multipart boundary (if any) replaced by a fixed one."""
    found = re.search(rb"boundary=(omniqual-[0-9a-f]+)", raw)
    return raw if found is None else raw.replace(found.group(1), b"BOUNDARY")
