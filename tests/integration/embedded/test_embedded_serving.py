"""Each bundled tiny pipeline served by real vLLM-Omni on the CPU platform answers its endpoint.

Checks the bytes are a valid PNG/MP4/WAV of the requested shape and prints time-to-ready and
request latency (visible with `pytest -s`, also stored as junit properties). Each pipeline is
served by its bundled recipe's session-shared server (the same argv as the catalog's
server_args): these tests only send requests.
"""

from __future__ import annotations

import base64
import io
import time
import wave
from collections.abc import Callable
from contextlib import AbstractContextManager

import httpx
import pytest
from embedded_server import EMBEDDED_MARKS
from PIL import Image

from omniqual.deploy.embedded.catalog import PIPELINES
from tests.integration.embedded.shared_servers import SharedServer, SharedServers

pytestmark = EMBEDDED_MARKS
SHARED_SERVERS = ["sd3-tiny", "qwen-image-tiny", "qwen-image-edit-tiny", "wan-t2v-tiny",
                  "wan-i2v-tiny", "stable-audio-tiny"]  # fmt: skip
"""The session-shared servers this module borrows: each pipeline's bundled recipe."""

Recorder = Callable[[str, object], None]
TIMEOUT = httpx.Timeout(120.0)


def _png(data: bytes) -> Image.Image:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


def _mp4_shape(data: bytes) -> tuple[str, int, int, int]:
    import av

    assert data[4:8] == b"ftyp"
    with av.open(io.BytesIO(data)) as container:
        stream = container.streams.video[0]
        frames = sum(1 for _ in container.decode(stream))
        return stream.codec_context.name, stream.width, stream.height, frames


def _record(record_property: Recorder, server: SharedServer, latency_s: float) -> None:
    record_property("time_to_ready_s", round(server.ready_s, 2))
    record_property("request_latency_s", round(latency_s, 3))
    print(f"ready {server.ready_s:.2f} s, request {latency_s:.3f} s")


def _serve(name: str, servers: SharedServers) -> AbstractContextManager[SharedServer]:
    """The session's server of the bundled recipe named like the pipeline."""
    entry = PIPELINES[name]
    assert entry.known_failure is None, entry.known_failure
    return servers.borrow(name)


def test_sd3_tiny_generates_png(shared_servers: SharedServers, record_property: Recorder) -> None:
    with _serve("sd3-tiny", shared_servers) as server:
        body = {"prompt": "a fox", "size": "64x48", "num_inference_steps": 2, "seed": 1}
        started = time.monotonic()
        response = httpx.post(
            f"{server.base_url}/v1/images/generations", json=body, timeout=TIMEOUT
        )
        latency = time.monotonic() - started
        assert response.status_code == 200, response.text[:500]
        image = _png(base64.b64decode(response.json()["data"][0]["b64_json"]))
        assert image.size == (64, 48)
        _record(record_property, server, latency)


@pytest.mark.parametrize("name", ["qwen-image-tiny"])
def test_qwen_image_tiny_generates_png(
    name: str, shared_servers: SharedServers, record_property: Recorder
) -> None:
    args = PIPELINES[name].server_args
    assert args == ("--model-class-name", "QwenImagePipeline")
    with _serve(name, shared_servers) as server:
        body = {"prompt": "a fox", "size": "64x64", "num_inference_steps": 2, "seed": 1}
        started = time.monotonic()
        response = httpx.post(
            f"{server.base_url}/v1/images/generations", json=body, timeout=TIMEOUT
        )
        latency = time.monotonic() - started
        assert response.status_code == 200, response.text[:500]
        assert _png(base64.b64decode(response.json()["data"][0]["b64_json"])).size == (64, 64)
        _record(record_property, server, latency)


def test_qwen_image_edit_tiny_edits_png(
    shared_servers: SharedServers, record_property: Recorder
) -> None:
    source = io.BytesIO()
    Image.new("RGB", (64, 64), (40, 120, 200)).save(source, format="PNG")
    with _serve("qwen-image-edit-tiny", shared_servers) as server:
        form = {"prompt": "make it red", "num_inference_steps": "2", "seed": "1"}
        files = {"image": ("source.png", source.getvalue(), "image/png")}
        started = time.monotonic()
        response = httpx.post(
            f"{server.base_url}/v1/images/edits", data=form, files=files, timeout=TIMEOUT
        )
        latency = time.monotonic() - started
        assert response.status_code == 200, response.text[:500]
        payload = response.json()
        assert _png(base64.b64decode(payload["data"][0]["b64_json"])).size == (64, 64)
        assert payload["size"] == "64x64"
        _record(record_property, server, latency)


def _wait_for_video(base_url: str, video_id: str) -> dict[str, object]:
    deadline = time.monotonic() + 120.0
    while time.monotonic() < deadline:
        job: dict[str, object] = httpx.get(
            f"{base_url}/v1/videos/{video_id}", timeout=TIMEOUT
        ).json()
        if job["status"] in ("completed", "failed"):
            return job
        time.sleep(0.2)
    raise AssertionError(f"video job {video_id} did not finish")


@pytest.mark.parametrize("name", ["wan-t2v-tiny", "wan-i2v-tiny"])
def test_wan_tiny_async_and_sync_mp4(
    name: str, shared_servers: SharedServers, record_property: Recorder
) -> None:
    form = {
        "prompt": "a fox",
        "size": "64x48",
        "num_frames": "9",
        "num_inference_steps": "2",
        "seed": "1",
    }
    files: dict[str, tuple[str, bytes, str]] = {}
    if name == "wan-i2v-tiny":
        reference = io.BytesIO()
        Image.new("RGB", (64, 48), (200, 40, 40)).save(reference, format="PNG")
        files = {"input_reference": ("ref.png", reference.getvalue(), "image/png")}
    with _serve(name, shared_servers) as server:
        created = httpx.post(
            f"{server.base_url}/v1/videos", data=form, files=files or None, timeout=TIMEOUT
        )
        assert created.status_code == 200, created.text[:500]
        assert created.json()["status"] == "queued"
        job = _wait_for_video(server.base_url, created.json()["id"])
        assert job["status"] == "completed", job
        content = httpx.get(f"{server.base_url}/v1/videos/{job['id']}/content", timeout=TIMEOUT)
        assert content.status_code == 200
        assert content.headers["content-type"] == "video/mp4"
        assert _mp4_shape(content.content) == ("h264", 64, 48, 9)

        started = time.monotonic()
        synced = httpx.post(
            f"{server.base_url}/v1/videos/sync", data=form, files=files or None, timeout=TIMEOUT
        )
        latency = time.monotonic() - started
        assert synced.status_code == 200, synced.text[:500]
        assert _mp4_shape(synced.content) == ("h264", 64, 48, 9)
        # Same seed, same request: the async and sync paths give the same video.
        assert synced.content == content.content
        _record(record_property, server, latency)


def test_stable_audio_tiny_generates_wav(
    shared_servers: SharedServers, record_property: Recorder
) -> None:
    with _serve("stable-audio-tiny", shared_servers) as server:
        body = {"input": "rain", "audio_length": 1.0, "num_inference_steps": 2, "seed": 1}
        started = time.monotonic()
        response = httpx.post(f"{server.base_url}/v1/audio/generate", json=body, timeout=TIMEOUT)
        latency = time.monotonic() - started
        assert response.status_code == 200, response.text[:500]
        assert response.headers["content-type"] == "audio/wav"
        with wave.open(io.BytesIO(response.content)) as clip:
            assert (clip.getnchannels(), clip.getframerate()) == (2, 44_100)
            assert clip.getnframes() == 44_100
        too_long = httpx.post(
            f"{server.base_url}/v1/audio/generate",
            json={**body, "audio_length": 3.0},
            timeout=TIMEOUT,
        )
        assert too_long.status_code == 400
        _record(record_property, server, latency)
