"""The loadgen-to-HTTP binding: request shapes per endpoint, outcomes, injections, job traces,
and the resource helpers it feeds (Prometheus gauges, memory trend)."""

from __future__ import annotations

import asyncio
import dataclasses
from types import MappingProxyType

import pytest

from omniqual.checks.load_binding import (
    EntryBinding,
    Injection,
    OmniSend,
    _wire_call,
    endpoint_for,
    server_timings,
    wire_call,
)
from omniqual.checks.soak.watch import ResourcePoint, memory_trend, parse_process_gauges
from omniqual.checks.synthetic_inputs import request_prompt
from omniqual.client import OmniClient, RawResponse
from omniqual.loadgen.records import OutcomeStatus
from omniqual.loadgen.workload import EndpointKind, PlannedRequest, RequestParams
from tests.fakes.fake_config import FakeConfig, FakeFaults
from tests.fakes.fake_omni import FakeOmni


def planned(kind: EndpointKind, entry: str = "small", index: int = 0) -> PlannedRequest:
    params = RequestParams(64, 64, 9, 2, 6, None, 11, ())
    return PlannedRequest(index, 0.0, entry, "t2i", kind, params)


@pytest.mark.parametrize("kind", list(EndpointKind))
def test_a_seeded_request_equals_one_built_from_scratch(kind: EndpointKind) -> None:
    """wire_call builds a shape once and sets each request's seed on a copy: the result must be
    exactly the request built whole with that seed, and the shared template must not change."""
    params = RequestParams(64, 48, 5, 3, 6, 2.5, 1234, (("negative_prompt", "blur"),))
    first = wire_call(PlannedRequest(9, 0.0, "e", "t2i", kind, params))
    built = _wire_call.__wrapped__(
        kind, params, request_prompt(PlannedRequest(9, 0.0, "e", "t2i", kind, params))
    )
    assert (first.json, first.data, first.files, first.path) == (
        built.json, built.data, built.files, built.path)  # fmt: skip
    other = wire_call(PlannedRequest(9, 0.0, "e", "t2i", kind, dataclasses.replace(params, seed=7)))
    seeds = str((other.json or {}).get("seed", "")) + str((other.data or {}).get("seed", ""))
    seeds += str((other.json or {}).get("extra_body", {}).get("seed", ""))
    assert seeds == "7" and first == wire_call(PlannedRequest(9, 0.0, "e", "t2i", kind, params))


def test_api_modes_map_to_endpoints() -> None:
    assert endpoint_for("videos-async") is EndpointKind.VIDEO_ASYNC
    assert endpoint_for("images-edits") is EndpointKind.IMAGE_EDIT
    assert endpoint_for("offline") is None and endpoint_for(None) is None


@pytest.mark.parametrize(
    ("kind", "path", "field", "value"),
    [(EndpointKind.IMAGE, "/v1/images/generations", "size", "64x64"),
     (EndpointKind.AUDIO, "/v1/audio/generate", "num_inference_steps", 2),
     (EndpointKind.VIDEO_SYNC, "/v1/videos/sync", "num_frames", "9"),
     (EndpointKind.IMAGE_EDIT, "/v1/images/edits", "size", "64x64")],
)  # fmt: skip
def test_wire_call_builds_the_endpoint_request(
    kind: EndpointKind, path: str, field: str, value: object
) -> None:
    call = wire_call(planned(kind))
    assert call.path == path
    body = call.json if call.json is not None else call.data
    assert body is not None and body[field] == value
    if kind is EndpointKind.IMAGE_EDIT:
        assert call.files[0][1][1][:8] == b"\x89PNG\r\n\x1a\n"


def test_chat_knobs_travel_in_extra_body() -> None:
    call = wire_call(planned(EndpointKind.CHAT))
    assert call.json is not None and call.json["extra_body"]["width"] == 64


def test_server_timing_headers_are_parsed() -> None:
    raw = RawResponse("POST", "/x", "http://h/x", 200, MappingProxyType({
        "x-inference-time-s": "0.25", "x-stage-durations": '{"diffuse": 0.2, "note": "n"}'}),
        b"{}", 0.3, "application/json", None)  # fmt: skip
    assert server_timings(raw) == (("inference", 0.25), ("stage:diffuse", 0.2))


def _send(fake: FakeOmni, **bindings: EntryBinding) -> OmniSend:
    return OmniSend(OmniClient("http://fake", transport=fake.transport()), bindings=bindings)


def test_plain_disconnect_and_drop_outcomes() -> None:
    fake = FakeOmni(FakeConfig(image_work_s=0.2, faults=FakeFaults(drops_requests=3)))
    send = _send(fake, cut=EntryBinding(Injection.DISCONNECT, 0.05))

    async def scenario() -> list[OutcomeStatus | str | None]:
        ok = await send(planned(EndpointKind.IMAGE))
        cut = await send(planned(EndpointKind.IMAGE, "cut"))
        dropped = await send(planned(EndpointKind.IMAGE))
        await send.client.aclose()
        return [ok.status, cut.status, cut.error_kind, dropped.status, dropped.error_kind]

    assert asyncio.run(scenario()) == [
        OutcomeStatus.OK, OutcomeStatus.ABORTED, "client_disconnect",
        OutcomeStatus.ERROR, "TargetProtocolError",
    ]  # fmt: skip
    assert fake.state.aborted == 1 and fake.state.dropped == 1


def test_async_jobs_are_traced_and_cancelled() -> None:
    fake = FakeOmni(FakeConfig(video_queue_s=0.02, video_run_s=0.3))
    send = _send(fake, cut=EntryBinding(Injection.CANCEL, 0.05, recheck_after_s=0.4))

    async def scenario() -> tuple[OutcomeStatus, OutcomeStatus]:
        done = await send(planned(EndpointKind.VIDEO_ASYNC))
        cancelled = await send(planned(EndpointKind.VIDEO_ASYNC, "cut", 1))
        await send.client.aclose()
        return done.status, cancelled.status

    assert asyncio.run(scenario()) == (OutcomeStatus.OK, OutcomeStatus.ABORTED)
    finished, cut = send.jobs
    assert finished.terminal_states == ("completed",) and finished.content_status == 200
    assert cut.cancelled and cut.after_cancel_status == 404 and not cut.served_after_cancel


def test_a_job_that_finished_before_its_cancel_is_an_injection_that_did_not_happen() -> None:
    # The DELETE comes after the job completed: no fault was injected, and the 'completed' it
    # shows must not read as an ignored cancellation.
    fake = FakeOmni(FakeConfig(video_queue_s=0.01, video_run_s=0.02))
    send = _send(fake, cut=EntryBinding(Injection.CANCEL, 0.2, recheck_after_s=0.05))

    async def scenario() -> tuple[OutcomeStatus, str | None]:
        late = await send(planned(EndpointKind.VIDEO_ASYNC, "cut", 1))
        await send.client.aclose()
        return late.status, late.error_kind

    assert asyncio.run(scenario()) == (OutcomeStatus.OK, "answered_before_cut")
    [job] = send.jobs
    assert not job.cancelled and fake.state.cancelled_jobs == 0


def test_process_gauges_and_memory_trend() -> None:
    text = "# TYPE x gauge\nprocess_resident_memory_bytes 1.5e+09\nprocess_open_fds 42.0\n"
    assert parse_process_gauges(text) == (1_500_000_000, 42)
    growing = [ResourcePoint(t, "metrics", 1000 + 60 * t, None, None, None) for t in range(10)]
    trend = memory_trend(growing)
    assert trend is not None and trend.slope == pytest.approx(60.0)
    assert memory_trend(growing[:2]) is None
