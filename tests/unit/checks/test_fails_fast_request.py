"""fails_fast_request against in-process transports: an image model must refuse POST /v1/videos
quickly, with a 4xx naming the restriction, and stay healthy."""

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

from omniqual.checks.base import CheckContext, CheckOutcome, TargetInfo
from omniqual.checks.fails_fast import FailsFastRequestCheck, FailsFastRequestParams
from omniqual.client import OmniClient
from omniqual.domain.axes import RowKey
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from tests.fakes.fake_omni import FakeOmni
from tests.fakes.memory_sink import MemorySink

PARAMS = FailsFastRequestParams(
    path="/v1/videos", form={"prompt": "a cat", "num_inference_steps": "2"},
    actionable_patterns=(r"(?i)(does not support|not supported|unsupported).*(video|task)",),
    deadline_s=5,
)  # fmt: skip
Handler = Callable[[httpx.Request], Awaitable[httpx.Response]]


def image_only(status: int = 400, message: str | None = None, health: int = 200) -> Handler:
    text = message or "Model sd3-tiny does not support the video generation task (t2v)"

    async def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/health":
            return httpx.Response(health)
        body = {"error": {"message": text, "type": "BadRequestError", "code": status}}
        return httpx.Response(status, json=body)

    return handle


def run(transport: httpx.AsyncBaseTransport, params: FailsFastRequestParams = PARAMS) -> tuple[
    CheckOutcome, MemorySink
]:  # fmt: skip
    sink = MemorySink()
    ctx = CheckContext(
        gate=GateSpec(id="fails-fast-request", kind="fails_fast_request", version=1),
        row=RowKey((("model", "sd3-tiny"), ("task", "t2v"))),
        target=TargetInfo(url="http://fake.invalid", label="fake"),
        artifacts=sink, project_root=Path("."),
        make_client=lambda: OmniClient("http://fake.invalid", transport=transport),
    )  # fmt: skip
    return asyncio.run(FailsFastRequestCheck().run(ctx, params)), sink


def test_clear_refusal_passes_and_records_time_and_message() -> None:
    outcome, sink = run(httpx.MockTransport(image_only()))
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert outcome.measurements[0].name == "time_to_rejection" and outcome.measurements[0].ok
    assert outcome.cases[0].observed_status == "400"
    evidence = json.loads(sink.blobs["fail-fast-evidence.json"])
    assert "does not support the video generation task" in evidence["message"]
    assert evidence["health_after"] == 200
    assert "a cat" not in json.dumps(evidence)  # the prompt is never recorded


def test_serving_the_request_is_a_silent_fallback() -> None:
    outcome, sink = run(FakeOmni().transport())  # the fake serves every task
    assert outcome.outcome is GateOutcome.FAILED
    assert outcome.reasons == (
        "POST /v1/videos answered 200: the deployment served a request it must refuse"
        " (silent fallback)",
    )
    evidence = json.loads(sink.blobs["fail-fast-evidence.json"])
    assert "id" in evidence["served_fields"] and evidence["message"] == ""
    assert "a cat" not in json.dumps(evidence)  # the echoed prompt is not kept


def test_unhelpful_message_fails() -> None:
    outcome, _ = run(httpx.MockTransport(image_only(message="Bad Request")))
    assert outcome.outcome is GateOutcome.FAILED
    assert "so it is not actionable (error: 'Bad Request')" in outcome.reasons[0]


def test_server_error_is_not_a_clean_refusal() -> None:
    outcome, _ = run(httpx.MockTransport(image_only(status=500)))
    assert outcome.outcome is GateOutcome.FAILED
    assert outcome.reasons[0].startswith("POST /v1/videos answered 500, expected one of [400")


def test_slow_refusal_fails() -> None:
    async def slow(request: httpx.Request) -> httpx.Response:
        if request.url.path != "/health":
            await asyncio.sleep(0.3)
        return await image_only()(request)

    params = PARAMS.model_copy(update={"deadline_s": 0.05})
    outcome, _ = run(httpx.MockTransport(slow), params)
    assert outcome.outcome is GateOutcome.FAILED
    assert any("was refused only after" in r and "beyond 0.05s" in r for r in outcome.reasons)


def test_unhealthy_after_refusal_fails() -> None:
    outcome, _ = run(httpx.MockTransport(image_only(health=503)))
    assert outcome.reasons == ("GET /health answered 503 after the refusal",)
