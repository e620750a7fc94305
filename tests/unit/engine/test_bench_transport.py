"""How the bench transport judges an answer (no sockets: ``judge`` only)."""

from __future__ import annotations

from omniqual.engine.bench.transport import judge
from omniqual.loadgen.records import OutcomeStatus
from omniqual.loadgen.workload import EndpointKind

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
