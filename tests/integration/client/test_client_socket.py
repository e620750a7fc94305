"""`OmniClient` against the fake served on a real socket (127.0.0.1, ephemeral ports): the
whole API, real disconnects, dropped connections, garbage, refused and timed-out targets."""

from __future__ import annotations

import asyncio
import contextlib
import io
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from PIL import Image

from omniqual.client import (
    AudioGenerateRequest,
    ChatDiffusionRequest,
    ClientTimeouts,
    ImageEditRequest,
    ImageGenerationRequest,
    OmniClient,
    TargetProtocolError,
    TargetTimeout,
    TargetUnreachable,
    VideoCreateRequest,
)
from tests.fakes import FakeConfig, FakeFaults, FakeOmni, serve_fake

pytestmark = pytest.mark.integration
T = TypeVar("T")


def _against(url: str, scenario: Callable[[OmniClient], Awaitable[T]], **kw: Any) -> T:
    async def main() -> T:
        async with OmniClient(url, **kw) as client:
            return await scenario(client)

    return asyncio.run(main())


def _wait_for(predicate: Callable[[], bool], timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_every_endpoint_over_a_real_socket() -> None:
    fake = FakeOmni(FakeConfig(video_queue_s=0.01, video_run_s=0.05))
    png = io.BytesIO()
    Image.new("RGB", (32, 32)).save(png, format="PNG")

    async def scenario(c: OmniClient) -> dict[str, Any]:
        out: dict[str, Any] = {"health": await c.health(), "models": await c.models()}
        out["image"] = await c.generate_image(ImageGenerationRequest(prompt="p", size="32x32", n=2))
        out["edit"] = await c.edit_image(ImageEditRequest(prompt="p", images=[png.getvalue()]))
        job = await c.create_video(VideoCreateRequest(prompt="p", seed=1))
        out["poll"] = await c.wait_video(job.id, interval_s=0.02, timeout_s=10)
        out["content"] = await c.video_content(job.id)
        out["sync"] = await c.generate_video_sync(VideoCreateRequest(prompt="p", seed=1))
        out["list"] = await c.list_videos()
        out["deleted"] = await c.delete_video(job.id)
        out["audio"] = await c.generate_audio(AudioGenerateRequest(input="x", audio_length=0.2))
        out["chat"] = await c.chat_diffusion(ChatDiffusionRequest(prompt="p"))
        out["metrics"] = await c.metrics_text()
        return out

    with serve_fake(fake) as url:
        assert url.startswith("http://127.0.0.1:")
        out = _against(url, scenario)
    assert out["health"].healthy and out["models"].data[0].id == "fake/omni-tiny"
    assert len(out["image"].images) == 2 and len(out["edit"].images) == 1
    assert out["poll"].final.status == "completed"
    assert out["content"].looks_like_mp4 and out["sync"].content == out["content"].content
    assert out["sync"].raw.inference_time_s == pytest.approx(0.05)
    assert len(out["list"].data) == 1 and out["deleted"].deleted
    assert out["audio"].looks_like_wav and len(out["chat"].images) == 1
    assert "vllm_omni:requests_success_total" in out["metrics"]
    assert out["image"].raw.headers["server"].startswith("BaseHTTP")


def test_connection_refused_is_unreachable_with_a_readable_message() -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    with pytest.raises(TargetUnreachable) as caught:
        _against(url, lambda c: c.health())
    message = str(caught.value)
    assert url in message and "connection refused" in message and "hint:" in message


def test_a_stopped_fake_refuses_connections() -> None:
    with serve_fake(FakeConfig()) as url:
        assert _against(url, lambda c: c.health()).healthy
    with pytest.raises(TargetUnreachable):
        _against(url, lambda c: c.health())


@contextlib.contextmanager
def _garbage_server() -> Iterator[str]:
    """A TCP server that answers every connection with bytes that are not HTTP."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.1)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.recv(65536)
                conn.sendall(b"\x00\x01 this is not http at all \r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()


def test_a_non_http_server_is_a_protocol_error() -> None:
    with _garbage_server() as url, pytest.raises(TargetProtocolError) as caught:
        _against(url, lambda c: c.health())
    assert url in str(caught.value)


def test_garbage_json_and_dropped_connections_are_protocol_errors() -> None:
    garbage = FakeOmni(FakeConfig(faults=FakeFaults(garbage_responses=True)))
    with serve_fake(garbage) as url, pytest.raises(TargetProtocolError, match="not JSON"):
        _against(url, lambda c: c.generate_image(ImageGenerationRequest(prompt="p")))

    dropping = FakeOmni(FakeConfig(faults=FakeFaults(drops_requests=1)))
    with serve_fake(dropping) as url, pytest.raises(TargetProtocolError, match="disconnected"):
        _against(url, lambda c: c.generate_image(ImageGenerationRequest(prompt="p")))
    assert dropping.state.dropped == 1


def test_read_timeout_is_target_timeout() -> None:
    fake = FakeOmni(FakeConfig(image_work_s=5))
    with serve_fake(fake) as url, pytest.raises(TargetTimeout) as caught:
        _against(
            url,
            lambda c: c.generate_image(ImageGenerationRequest(prompt="p", size="16x16")),
            timeouts=ClientTimeouts(read_s=0.2),
        )
    assert caught.value.phase == "waiting for the response"


def test_client_disconnect_is_seen_by_the_server_and_leaks_show(tmp_path: Path) -> None:
    faults = FakeFaults(leaks_per_abort=True, hangs_after_disconnect=True)
    fake = FakeOmni(FakeConfig(video_run_s=30, temp_dir=tmp_path, hang_s=30, faults=faults))

    async def abandon(c: OmniClient) -> Any:
        return await c.send_and_disconnect(
            "POST", "/v1/videos/sync", data={"prompt": "p"}, after_s=0.2
        )

    with serve_fake(fake) as url:
        before = _against(url, lambda c: c.metrics_text())
        outcome = _against(url, abandon)
        assert _wait_for(lambda: fake.state.aborted == 1)
        with pytest.raises(TargetTimeout):
            _against(url, lambda c: c.health(), timeouts=ClientTimeouts(total_s=0.3))
    assert not outcome.answered and outcome.elapsed_s >= 0.2
    assert "process_resident_memory_bytes 943718400" in before
    assert fake.state.leaked_bytes == 16 * 1024 * 1024
    assert len(list(tmp_path.iterdir())) == 1
    assert fake.state.completed == 0


def test_oversized_upload_over_the_wire_is_413() -> None:
    fake = FakeOmni(FakeConfig(max_upload_bytes=64 * 1024))
    files = [("image", ("big.png", b"\x00" * (256 * 1024), "image/png"))]
    with serve_fake(fake) as url:
        raw = _against(
            url, lambda c: c.send_raw("POST", "/v1/images/edits", data={"prompt": "p"}, files=files)
        )
    assert raw.status == 413 and raw.error is not None and raw.error.code == 413
