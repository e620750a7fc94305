"""stage_durations / peak_memory_mb in the places vLLM-Omni 0.30 puts them (shapes copied from
an embedded sd3-tiny server started with --enable-diffusion-pipeline-profiler)."""

import json
from types import MappingProxyType

from omniqual.client import RawResponse, metrics_from_doc, server_metrics

PROFILED = {
    "StableDiffusion3Pipeline.text_encoder.forward": 0.004,
    "StableDiffusion3Pipeline.diffuse": 0.012,
    "StableDiffusion3Pipeline.vae.decode": 0.010,
    "queue_wait_ms": 0.5,
    "stage_0_gen_ms": 46.0,
}
SECONDS = (
    ("StableDiffusion3Pipeline.text_encoder.forward", 0.004),
    ("StableDiffusion3Pipeline.diffuse", 0.012),
    ("StableDiffusion3Pipeline.vae.decode", 0.010),
    ("queue_wait", 0.0005),
    ("stage_0_gen", 0.046),
)


def _raw(doc: object, headers: dict[str, str] | None = None) -> RawResponse:
    body = json.dumps(doc).encode()
    return RawResponse("POST", "/x", "http://h/x", 200, MappingProxyType(headers or {}), body,
                       0.1, "application/json", None)  # fmt: skip


def test_image_generation_metrics_object_is_read_and_ms_become_seconds() -> None:
    doc = {"data": [{"b64_json": "AAAA"}], "metrics": {"stage_durations": PROFILED,
                                                        "peak_memory_mb": 908.5}}  # fmt: skip
    found = server_metrics(_raw(doc))
    assert found.stage_durations_s == SECONDS
    assert found.peak_memory_mb == 908.5


def test_chat_content_item_carries_them() -> None:
    item = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"},
            "stage_durations": {"queue_wait_ms": 200.0}, "peak_memory_mb": 912.0}  # fmt: skip
    doc = {"choices": [{"message": {"content": [item]}}], "metrics": None}
    found = metrics_from_doc(doc)
    assert found.stage_durations_s == (("queue_wait", 0.2),)
    assert found.peak_memory_mb == 912.0


def test_video_job_top_level_and_zero_peak_is_absent() -> None:
    job = {"id": "video_gen_1", "status": "completed", "stage_durations": {"x.diffuse": 1.5},
           "peak_memory_mb": 0.0, "usage": {"peak_memory_mb": 0}}  # fmt: skip
    found = metrics_from_doc(job)
    assert found.stage_durations_s == (("x.diffuse", 1.5),)
    assert found.peak_memory_mb is None


def test_usage_peak_and_legacy_headers_fill_in() -> None:
    headers = {"x-stage-durations": '{"diffuse": 0.2, "note": "n"}', "x-peak-memory-mb": "10"}
    found = server_metrics(_raw({"data": [], "usage": {"peak_memory_mb": 77.0}}, headers))
    assert found.stage_durations_s == (("diffuse", 0.2),)
    assert found.peak_memory_mb == 77.0


def test_non_json_body_and_junk_values_say_nothing() -> None:
    raw = RawResponse("POST", "/x", "http://h/x", 200, MappingProxyType({}), b"\x89PNG", 0.1,
                      "image/png", None)  # fmt: skip
    assert server_metrics(raw).stage_durations_s == ()
    doc = {"metrics": {"stage_durations": {"a": True, "b": "1", "c": None}, "peak_memory_mb": "9"}}
    assert metrics_from_doc(doc).stage_durations_s == ()
    assert metrics_from_doc(doc).peak_memory_mb is None
