"""Error mapping of `OmniClient`: HTTP errors are data in `send_raw` and `ApiError` in typed
calls; transport failures become `TargetUnreachable` / `TargetTimeout` / `TargetProtocolError`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from omniqual.client import (
    ApiError,
    ClientError,
    ClientTimeouts,
    ImageGenerationRequest,
    OmniClient,
    TargetProtocolError,
    TargetTimeout,
    TargetUnreachable,
    VideoCreateRequest,
)
from tests.fakes import FakeOmni

Drive = Callable[..., Any]


def _with_handler(handler: Callable[[httpx.Request], Any], scenario: Any, **kw: Any) -> Any:
    async def main() -> Any:
        transport = httpx.MockTransport(handler)
        async with OmniClient("http://target.test", transport=transport, **kw) as client:
            return await scenario(client)

    return asyncio.run(main())


def _image(c: OmniClient) -> Any:
    return c.generate_image(ImageGenerationRequest(prompt="p"))


def test_send_raw_returns_an_error_status_as_data_with_the_envelope(drive: Drive) -> None:
    async def scenario(c: OmniClient) -> Any:
        return await c.send_raw("POST", "/v1/images/generations", json={"prompt": "p", "n": 0})

    raw = drive(scenario)
    assert raw.status == 400 and not raw.ok
    assert raw.error is not None and raw.error.shape == "error"
    assert raw.error.param == "n" and "greater_than_equal" in raw.error.message
    assert raw.error.type == "Bad Request" and raw.error.code == 400


def test_api_error_text_never_quotes_the_request() -> None:
    message = "1 validation error: n [type=int_parsing, input_value={'prompt': 'SECRET-7'}]"

    def handler(request: httpx.Request) -> httpx.Response:
        error = {"message": message, "type": "Bad Request", "param": "n", "code": 400}
        return httpx.Response(400, json={"error": error})

    async def scenario(c: OmniClient) -> ApiError:
        with pytest.raises(ApiError) as caught:
            await c.generate_image(ImageGenerationRequest(prompt="SECRET-7"))
        return caught.value

    err = _with_handler(handler, scenario)
    assert err.error is not None and err.error.message == message
    assert "SECRET-7" not in str(err) and "param='n'" in str(err)


def test_wait_video_gives_up_with_target_timeout(run: Drive) -> None:
    fake = FakeOmni()
    fake.config.video_run_s = 3600

    async def scenario(c: OmniClient) -> None:
        job = await c.create_video(VideoCreateRequest(prompt="x"))
        await c.wait_video(job.id, interval_s=0.005, timeout_s=0.03)

    with pytest.raises(TargetTimeout, match="polling"):
        run(fake, scenario)


def test_typed_call_raises_api_error_with_status_and_envelope(drive: Drive) -> None:
    async def scenario(c: OmniClient) -> ApiError:
        with pytest.raises(ApiError) as caught:
            await c.generate_image(ImageGenerationRequest(prompt="p", size="17x16"))
        return caught.value

    err = drive(scenario)
    assert err.status == 400 and err.error is not None and err.error.param == "size"
    assert "POST /v1/images/generations -> HTTP 400" in str(err) and "param='size'" in str(err)
    assert isinstance(err, ClientError)


@pytest.mark.parametrize(
    ("body", "message", "param"),
    [
        ({"detail": "Not allowed"}, "Not allowed", None),
        (
            {"detail": [{"loc": ["body", "prompt"], "msg": "Field required", "type": "missing"}]},
            "Field required",
            "prompt",
        ),
    ],
)
def test_fastapi_detail_bodies_are_tolerated(body: Any, message: str, param: str | None) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(422, json=body)

    raw = _with_handler(handler, lambda c: c.send_raw("GET", "/x"))
    assert raw.error is not None and raw.error.shape == "detail"
    assert message in raw.error.message and raw.error.param == param


def test_an_error_without_envelope_still_raises_api_error_and_says_so() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, text="Internal Server Error")

    async def scenario(c: OmniClient) -> ApiError:
        with pytest.raises(ApiError) as caught:
            await _image(c)
        return caught.value

    err = _with_handler(handler, scenario)
    assert err.status == 500 and err.error is None
    assert "no error envelope" in str(err)


@pytest.mark.parametrize(
    ("exc", "expected", "needle"),
    [
        (httpx.ConnectError("All connection attempts failed"), TargetUnreachable, "hint"),
        (httpx.ConnectTimeout("timed out"), TargetUnreachable, "connect timed out"),
        (httpx.ReadTimeout("timed out"), TargetTimeout, "waiting for the response"),
        (httpx.WriteTimeout("timed out"), TargetTimeout, "sending the request"),
        (httpx.PoolTimeout("timed out"), TargetTimeout, "free connection"),
        (httpx.RemoteProtocolError("Server disconnected"), TargetProtocolError, "disconnected"),
        (httpx.ReadError("connection reset"), TargetProtocolError, "ReadError"),
    ],
)
def test_transport_failures_map_to_typed_errors(
    exc: Exception, expected: type[ClientError], needle: str
) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exc

    with pytest.raises(expected) as caught:
        _with_handler(handler, lambda c: c.send_raw("GET", "/health"))
    assert "http://target.test/health" in str(caught.value)
    assert needle in str(caught.value)


def test_connection_refused_names_the_cause() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        try:
            raise ConnectionRefusedError(111, "Connect call failed")
        except ConnectionRefusedError as refused:
            raise httpx.ConnectError("All connection attempts failed") from refused

    with pytest.raises(TargetUnreachable) as caught:
        _with_handler(handler, lambda c: c.health())
    assert caught.value.reason == "connection refused"
    assert "listening" in caught.value.hint


def test_unsupported_scheme_is_unreachable_with_a_hint() -> None:
    async def scenario() -> None:
        async with OmniClient("ftp://target.test") as client:
            await client.health()

    with pytest.raises(TargetUnreachable) as caught:
        asyncio.run(scenario())
    assert "http://" in caught.value.hint


def test_overall_deadline_bounds_a_hanging_answer() -> None:
    async def handler(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(30)
        return httpx.Response(200)

    timeouts = ClientTimeouts(total_s=0.05)
    with pytest.raises(TargetTimeout) as caught:
        _with_handler(handler, lambda c: c.health(), timeouts=timeouts)
    assert caught.value.timeout_s == 0.05


def test_per_call_timeout_overrides_the_default() -> None:
    async def handler(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(30)
        return httpx.Response(200)

    with pytest.raises(TargetTimeout):
        _with_handler(handler, lambda c: c.send_raw("GET", "/health", timeout_s=0.02))


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b"<html>oops</html>", "not JSON"),
        (json.dumps({"created": 1}).encode(), "does not match ImageGenerationResponse"),
        (json.dumps({"data": [{"b64_json": "***not base64***"}]}).encode(), "not valid base64"),
        (json.dumps({"data": [{"url": "https://cdn.test/x.png"}]}).encode(), "nor a data URL"),
    ],
)
def test_unusable_success_bodies_are_protocol_errors(content: bytes, needle: str) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=content, headers={"content-type": "application/json"})

    with pytest.raises(TargetProtocolError) as caught:
        _with_handler(handler, _image)
    assert needle in str(caught.value)


def test_a_failed_job_is_returned_as_a_job_not_an_error(run: Drive) -> None:
    from tests.fakes import FakeConfig, FakeFaults

    fake = FakeOmni(
        FakeConfig(video_queue_s=0, video_run_s=0, faults=FakeFaults(two_terminal_states=True))
    )

    async def scenario(c: OmniClient) -> Any:
        job = await c.create_video(VideoCreateRequest(prompt="x"))
        await c.get_video(job.id)  # reports completed once
        return await c.get_video(job.id)

    job = run(fake, scenario)
    assert job.status == "failed"
    assert job.error is not None and job.error.code == 500


def test_send_raw_body_variants_reach_the_server() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(204)

    async def scenario(c: OmniClient) -> None:
        await c.send_raw("POST", "/a", json=None)
        await c.send_raw("POST", "/b")
        await c.send_raw("POST", "/c", data={"n": 3, "flag": True, "tags": ["a", "b"]})
        await c.send_raw("POST", "/d", content=b"raw", headers={"Content-Type": "text/plain"})
        await c.send_raw("GET", "/e", params={"limit": 5})

    _with_handler(handler, scenario)
    assert seen[0].content == b"null" and seen[0].headers["content-type"] == "application/json"
    assert seen[1].content == b""
    assert seen[2].headers["content-type"].startswith("multipart/form-data; boundary=")
    body = seen[2].content
    assert b'name="n"\r\n\r\n3\r\n' in body and b"true" in body and body.count(b'"tags"') == 2
    assert seen[3].content == b"raw" and seen[3].headers["content-type"] == "text/plain"
    assert seen[4].url.params["limit"] == "5"


def test_send_and_disconnect_reports_a_fast_answer(drive: Drive, fake: FakeOmni) -> None:
    async def scenario(c: OmniClient) -> Any:
        return await c.send_and_disconnect("GET", "/health", after_s=5)

    outcome = drive(scenario)
    assert outcome.answered and outcome.status == 200
    assert fake.state.aborted == 0


def test_send_and_disconnect_aborts_a_slow_request(run: Drive) -> None:
    fake = FakeOmni()
    fake.config.video_run_s = 30

    async def scenario(c: OmniClient) -> Any:
        fields, files = VideoCreateRequest(prompt="x").to_multipart()
        return await c.send_and_disconnect(
            "POST", "/v1/videos/sync", data=fields, files=files, after_s=0.02
        )

    outcome = run(fake, scenario)
    assert not outcome.answered and outcome.status is None
    assert fake.state.aborted == 1 and fake.state.running == 0 and fake.state.completed == 0


def test_send_raw_refuses_two_kinds_of_body(drive: Drive) -> None:
    async def scenario(c: OmniClient) -> None:
        await c.send_raw("POST", "/x", json={"a": 1}, data={"b": "2"})

    with pytest.raises(ValueError, match="at most one"):
        drive(scenario)


def test_an_idle_connection_is_dropped_well_before_the_server_closes_it() -> None:
    """vLLM-Omni's server closes a connection idle for 5 s (VLLM_HTTP_TIMEOUT_KEEP_ALIVE); a
    client that keeps one as long sends requests into the close now and then, and loses them
    ("Server disconnected without sending a response"). The pool lets idle ones go at 2 s."""
    import asyncio

    from omniqual.client.client import KEEPALIVE_EXPIRY_S, OmniClient

    async def pool_expiry() -> float:
        async with OmniClient("http://127.0.0.1:9") as client:
            pool = client._http._transport._pool  # type: ignore[attr-defined]
            return float(pool._keepalive_expiry)

    assert KEEPALIVE_EXPIRY_S <= 2.5 < 5.0
    assert asyncio.run(pool_expiry()) == KEEPALIVE_EXPIRY_S
