"""Every typed `OmniClient` call against the fake server, in-process (no sockets)."""

from __future__ import annotations

import asyncio
import io
import logging
import wave
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from PIL import Image

from omniqual.client import (
    ApiError,
    AudioGenerateRequest,
    ChatDiffusionRequest,
    ImageEditRequest,
    ImageGenerationRequest,
    OmniClient,
    VideoCreateRequest,
)
from tests.fakes import FakeOmni

Drive = Callable[..., Any]


def _png(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 10, 10)).save(out, format="PNG")
    return out.getvalue()


def _size(data: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(data)) as image:
        return image.size


def test_generate_image_decodes_n_pngs_of_the_requested_size(drive: Drive) -> None:
    async def scenario(c: OmniClient) -> Any:
        request = ImageGenerationRequest(prompt="a red fox", size="64x32", n=2, seed=7)
        return await c.generate_image(request)

    result = drive(scenario)
    assert len(result.images) == 2
    assert all(img.startswith(b"\x89PNG\r\n\x1a\n") for img in result.images)
    assert {_size(img) for img in result.images} == {(64, 32)}
    assert result.response.output_format == "png"
    assert result.raw.status == 200 and result.raw.request_id is not None


def test_same_seed_same_bytes_other_seed_other_bytes(drive: Drive) -> None:
    async def scenario(c: OmniClient) -> list[bytes]:
        outs = []
        for seed in (1, 1, 2):
            req = ImageGenerationRequest(prompt="p", size="32x32", seed=seed)
            outs.append((await c.generate_image(req)).images[0])
        return outs

    first, again, other = drive(scenario)
    assert first == again
    assert first != other


def test_response_format_file_returns_the_raw_image(drive: Drive) -> None:
    async def scenario(c: OmniClient) -> Any:
        req = ImageGenerationRequest(prompt="p", size="48x48", response_format="file")
        return await c.generate_image(req)

    result = drive(scenario)
    assert result.raw.content_type == "image/png"
    assert _size(result.images[0]) == (48, 48)


def test_edit_image_keeps_the_input_size_by_default(drive: Drive) -> None:
    async def scenario(c: OmniClient) -> tuple[Any, Any]:
        auto = await c.edit_image(ImageEditRequest(prompt="make it blue", images=[_png(80, 48)]))
        sized = await c.edit_image(
            ImageEditRequest(prompt="make it blue", images=[_png(80, 48)], size="32x32")
        )
        return auto, sized

    auto, sized = drive(scenario)
    assert _size(auto.images[0]) == (80, 48)
    assert auto.response.size == "80x48"
    assert _size(sized.images[0]) == (32, 32)


def test_video_job_lifecycle_follows_the_clock(drive: Drive, fake: FakeOmni, clock: Any) -> None:
    async def scenario(c: OmniClient) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        job = await c.create_video(VideoCreateRequest(prompt="waves", seed=3, num_frames=10))
        seen["created"] = job.status
        with pytest.raises(ApiError) as early:
            await c.video_content(job.id)
        seen["early_status"] = early.value.status
        clock.advance(fake.config.video_queue_s + 0.001)
        seen["running"] = (await c.get_video(job.id)).status
        clock.advance(fake.config.video_run_s)
        done = await c.get_video(job.id)
        seen["done"] = done
        seen["content"] = await c.video_content(job.id)
        return seen

    seen = drive(scenario)
    assert seen["created"] == "queued"
    assert seen["early_status"] == 404
    assert seen["running"] == "in_progress"
    done = seen["done"]
    assert done.status == "completed" and done.progress == 100 and done.is_terminal
    assert done.file_name == f"{done.id}.mp4"
    assert done.model_extra is not None and done.model_extra["num_frames"] == 9  # 4k+1
    assert seen["content"].looks_like_mp4
    assert seen["content"].content_type == "video/mp4"


def test_wait_video_records_every_status(fake: FakeOmni, run: Drive) -> None:
    fast = FakeOmni(fake.config.model_copy(update={"video_queue_s": 0.0, "video_run_s": 0.0}))

    async def scenario(c: OmniClient) -> Any:
        job = await c.create_video(VideoCreateRequest(prompt="x"))
        return await c.wait_video(job.id, interval_s=0.001)

    polled = run(fast, scenario)
    assert polled.final.status == "completed"
    assert polled.observed[-1] == "completed" and polled.polls == len(polled.observed)


def test_delete_cancels_a_running_job(drive: Drive, fake: FakeOmni) -> None:
    async def scenario(c: OmniClient) -> tuple[Any, int]:
        job = await c.create_video(VideoCreateRequest(prompt="x"))
        deleted = await c.delete_video(job.id)
        with pytest.raises(ApiError) as gone:
            await c.get_video(job.id)
        return deleted, gone.value.status

    deleted, status = drive(scenario)
    assert deleted.deleted is True and deleted.object == "video.deleted"
    assert status == 404
    assert fake.state.cancelled_jobs == 1 and fake.state.jobs == {}


def test_list_videos_pages_in_order(drive: Drive) -> None:
    async def scenario(c: OmniClient) -> tuple[list[str], Any, Any, Any]:
        ids = [(await c.create_video(VideoCreateRequest(prompt=f"v{i}"))).id for i in range(3)]
        first = await c.list_videos(limit=2)
        rest = await c.list_videos(limit=2, after=first.last_id)
        ascending = await c.list_videos(order="asc")
        return ids, first, rest, ascending

    ids, first, rest, ascending = drive(scenario)
    assert [j.id for j in first.data] == [ids[2], ids[1]] and first.has_more
    assert [j.id for j in rest.data] == [ids[0]] and not rest.has_more
    assert [j.id for j in ascending.data] == ids


def test_sync_video_matches_async_content_and_carries_timing_headers(
    drive: Drive, clock: Any
) -> None:
    async def scenario(c: OmniClient) -> tuple[Any, Any]:
        request = VideoCreateRequest(prompt="same", seed=11, size="32x32", num_frames=5)
        sync = await c.generate_video_sync(request)
        job = await c.create_video(request)
        clock.advance(10)
        return sync, await c.video_content(job.id)

    sync, content = drive(scenario)
    assert sync.looks_like_mp4 and sync.content == content.content
    assert sync.raw.inference_time_s is not None and sync.raw.inference_time_s >= 0
    assert sync.raw.stage_durations == {"diffusion": pytest.approx(sync.raw.inference_time_s)}
    assert sync.raw.request_id is not None and sync.raw.request_id.startswith("video_sync-")
    assert sync.raw.peak_memory_mb == 0.0


def test_generate_audio_returns_a_wav_of_the_requested_length(drive: Drive) -> None:
    async def scenario(c: OmniClient) -> Any:
        return await c.generate_audio(AudioGenerateRequest(input="rain", audio_length=0.5))

    result = drive(scenario)
    assert result.looks_like_wav and result.content_type == "audio/wav"
    with wave.open(io.BytesIO(result.content)) as wav:
        assert (wav.getframerate(), wav.getnchannels()) == (44_100, 2)
        assert wav.getnframes() == 22_050


def test_chat_diffusion_decodes_data_url_images(drive: Drive) -> None:
    async def scenario(c: OmniClient) -> Any:
        request = ChatDiffusionRequest(
            prompt="a cat",
            images=[_png(16, 16)],
            extra_body={"height": 32, "width": 48, "seed": 5, "num_outputs_per_prompt": 2},
        )
        return await c.chat_diffusion(request)

    result = drive(scenario)
    assert len(result.images) == 2
    assert {_size(img) for img in result.images} == {(48, 32)}
    assert result.response.choices[0].finish_reason == "stop"


def test_models_health_and_metrics(drive: Drive, fake: FakeOmni) -> None:
    async def scenario(c: OmniClient) -> tuple[Any, Any, str]:
        return await c.models(), await c.health(), await c.metrics_text()

    models, health, metrics = drive(scenario)
    assert [m.id for m in models.data] == [fake.config.model_name]
    assert health.healthy and health.status == 200
    assert "vllm_omni:num_requests_running" in metrics
    assert "process_resident_memory_bytes 943718400" in metrics


def test_api_key_travels_as_bearer_and_nothing_else_is_added(fake: FakeOmni) -> None:
    seen: list[httpx.Headers] = []

    async def capture(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers)
        return await fake.handle_async(request)

    async def scenario() -> None:
        transport = httpx.MockTransport(capture)
        async with OmniClient("http://fake.test", api_key="tok-1", transport=transport) as c:
            await c.health()
        async with OmniClient("http://fake.test", transport=transport) as c:
            await c.health()

    asyncio.run(scenario())
    assert seen[0]["authorization"] == "Bearer tok-1"
    assert "authorization" not in seen[1]


def test_logs_name_method_path_status_but_never_the_prompt(
    drive: Drive, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "SECRET-PROMPT-93c1"

    async def scenario(c: OmniClient) -> None:
        await c.generate_image(ImageGenerationRequest(prompt=secret, size="16x16"))
        await c.send_raw("POST", "/v1/images/generations", json={"prompt": secret, "n": 99})

    with caplog.at_level(logging.DEBUG, logger="omniqual.client"):
        drive(scenario)
    assert "POST /v1/images/generations -> 200" in caplog.text
    assert "-> 400" in caplog.text
    assert secret not in caplog.text
    assert "b64" not in caplog.text


def test_sync_mock_transport_serves_a_sync_httpx_client() -> None:
    fake = FakeOmni()
    with httpx.Client(base_url="http://fake.test", transport=fake.sync_transport()) as client:
        answer = client.post("/v1/images/generations", json={"prompt": "p", "size": "16x16"})
    assert answer.status_code == 200
    assert len(answer.json()["data"]) == 1
    assert fake.state.completed == 1
