"""Each scripted fault of the fake visibly changes what a client sees (in-process, no sockets).
Every test contrasts the fault with the healthy default."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from omniqual.client import (
    ClientTimeouts,
    ImageGenerationRequest,
    OmniClient,
    TargetProtocolError,
    TargetTimeout,
    VideoCreateRequest,
)
from tests.fakes import FakeConfig, FakeFaults, FakeOmni, LatencySpike

Drive = Callable[..., Any]
GEN = "/v1/images/generations"
OUT_OF_RANGE = {"prompt": "p", "n": 11, "size": "24x24"}


def _fake(tmp_path: Path | None = None, clock: Any = None, **faults: Any) -> FakeOmni:
    config = FakeConfig(faults=FakeFaults(**faults), temp_dir=tmp_path)
    return FakeOmni(config, clock=clock)


@pytest.mark.parametrize(("enabled", "status"), [(False, 400), (True, 200)])
def test_accepts_out_of_range(run: Drive, enabled: bool, status: int) -> None:
    fake = _fake(accepts_out_of_range=enabled)
    raw = run(fake, lambda c: c.send_raw("POST", GEN, json=OUT_OF_RANGE))
    assert raw.status == status
    if enabled:
        assert len(raw.json()["data"]) == 11


def test_error_without_envelope(run: Drive) -> None:
    raw = run(_fake(error_without_envelope=True), lambda c: c.send_raw("POST", GEN, json={}))
    assert raw.status == 400 and raw.error is None
    assert raw.content_type == "text/plain" and raw.body == b"Bad Request"


@pytest.mark.parametrize("status", [400, 200])
def test_payload_limit_status(run: Drive, status: int) -> None:
    fake = _fake(payload_limit_status=status)
    fake.config.max_upload_bytes = 100
    body = {"prompt": "p" * 500, "size": "16x16"}
    raw = run(fake, lambda c: c.send_raw("POST", GEN, json=body))
    assert raw.status == status


def test_creates_job_for_invalid_async(run: Drive) -> None:
    fake = _fake(creates_job_for_invalid_async=True)

    async def scenario(c: OmniClient) -> tuple[int, Any]:
        raw = await c.send_raw("POST", "/v1/videos", data={"prompt": "p", "seconds": "0"})
        return raw.status, await c.list_videos()

    status, listed = run(fake, scenario)
    assert status == 400
    assert len(listed.data) == 1 and listed.data[0].status == "failed"


def test_leaves_temp_file(run: Drive, tmp_path: Path) -> None:
    fake = _fake(tmp_path, leaves_temp_file=True)
    run(fake, lambda c: c.generate_image(ImageGenerationRequest(prompt="p", size="16x16")))
    assert len(list(tmp_path.iterdir())) == 1 == len(fake.state.temp_files)
    healthy = _fake(tmp_path / "unused")
    run(healthy, lambda c: c.generate_image(ImageGenerationRequest(prompt="p", size="16x16")))
    assert healthy.state.temp_files == []


def test_unhealthy_after_rejection(run: Drive) -> None:
    async def scenario(c: OmniClient) -> tuple[bool, bool]:
        before = (await c.health()).healthy
        await c.send_raw("POST", GEN, json={"prompt": "p", "n": 0})
        return before, (await c.health()).healthy

    assert run(_fake(unhealthy_after_rejection=True), scenario) == (True, False)
    assert run(_fake(), scenario) == (True, True)


@pytest.mark.parametrize("enabled", [False, True])
def test_sync_async_bytes_differ(run: Drive, clock: Any, enabled: bool) -> None:
    async def scenario(c: OmniClient) -> bool:
        request = VideoCreateRequest(prompt="p", seed=4)
        sync = await c.generate_video_sync(request)
        job = await c.create_video(request)
        clock.advance(5)
        return sync.content == (await c.video_content(job.id)).content

    fake = _fake(clock=clock, sync_async_bytes_differ=enabled)
    fake.config.video_run_s = 0
    assert run(fake, scenario) is (not enabled)


def test_ignores_cancellation(run: Drive, clock: Any) -> None:
    fake = _fake(clock=clock, ignores_cancellation=True)

    async def scenario(c: OmniClient) -> tuple[bool, str, bool]:
        job = await c.create_video(VideoCreateRequest(prompt="p"))
        deleted = await c.delete_video(job.id)
        clock.advance(5)
        after = await c.get_video(job.id)
        content = await c.video_content(job.id)
        return deleted.deleted, after.status, content.looks_like_mp4

    assert run(fake, scenario) == (True, "completed", True)
    assert fake.state.cancelled_jobs == 0


def test_two_terminal_states(run: Drive) -> None:
    fake = _fake(two_terminal_states=True)
    fake.config.video_queue_s = fake.config.video_run_s = 0

    async def scenario(c: OmniClient) -> Any:
        job = await c.create_video(VideoCreateRequest(prompt="p"))
        return await c.wait_video(job.id, interval_s=0, settle_polls=1)

    polled = run(fake, scenario)
    assert polled.observed == ("completed", "failed")


def test_leaks_per_abort(run: Drive, tmp_path: Path) -> None:
    async def scenario(c: OmniClient) -> tuple[str, str]:
        before = await c.metrics_text()
        await c.send_and_disconnect("POST", "/v1/videos/sync", data={"prompt": "x"}, after_s=0.01)
        return before, await c.metrics_text()

    leaky = _fake(tmp_path, leaks_per_abort=True)
    leaky.config.video_run_s = 30
    before, after = run(leaky, scenario)
    assert "process_resident_memory_bytes 943718400" in before
    assert f"process_resident_memory_bytes {943718400 + 16 * 1024 * 1024}" in after
    assert leaky.state.aborted == 1 and len(list(tmp_path.iterdir())) == 1

    clean = _fake()
    clean.config.video_run_s = 30
    _, after_clean = run(clean, scenario)
    assert "process_resident_memory_bytes 943718400" in after_clean and clean.state.aborted == 1


def test_hangs_after_disconnect(run: Drive) -> None:
    async def scenario(c: OmniClient) -> bool:
        assert (await c.health()).healthy
        await c.send_and_disconnect("POST", "/v1/videos/sync", data={"prompt": "x"}, after_s=0.01)
        try:
            await c.health()
        except TargetTimeout:
            return True
        return False

    hanging = _fake(hangs_after_disconnect=True)
    hanging.config.video_run_s = 30
    assert run(hanging, scenario, timeouts=ClientTimeouts(total_s=0.2)) is True
    healthy = _fake()
    healthy.config.video_run_s = 30
    assert run(healthy, scenario, timeouts=ClientTimeouts(total_s=0.2)) is False


def test_latency_spike_applies_inside_its_window_only(clock: Any) -> None:
    fake = _fake(clock=clock, latency_spike=LatencySpike(start_s=10, duration_s=5, extra_s=2.5))
    request = httpx.Request("POST", f"http://fake.test{GEN}", json={"prompt": "p"})

    def work() -> float:
        outcome = fake.plan(request)
        assert hasattr(outcome, "work_s")
        return float(outcome.work_s)

    before = work()
    clock.advance(12)
    during = work()
    clock.advance(10)
    after = work()
    assert (before, during, after) == (0.0, 2.5, 0.0)


def test_drops_requests(run: Drive) -> None:
    fake = _fake(drops_requests=2)

    async def scenario(c: OmniClient) -> list[str]:
        outcomes = []
        for _ in range(4):
            try:
                await c.generate_image(ImageGenerationRequest(prompt="p", size="16x16"))
                outcomes.append("ok")
            except TargetProtocolError:
                outcomes.append("dropped")
        return outcomes

    assert run(fake, scenario) == ["ok", "dropped", "ok", "dropped"]
    assert fake.state.dropped == 2


def test_garbage_responses(run: Drive) -> None:
    fake = _fake(garbage_responses=True)

    async def scenario(c: OmniClient) -> Any:
        with pytest.raises(TargetProtocolError, match="not JSON"):
            await c.generate_image(ImageGenerationRequest(prompt="p"))
        with pytest.raises(TargetProtocolError):
            await c.models()
        raw = await c.send_raw("POST", GEN, json={"prompt": 1})  # even a bad request: 200
        health = await c.health()
        return raw, health

    raw, health = run(fake, scenario)
    assert raw.status == 200
    with pytest.raises(TargetProtocolError):
        raw.json()
    assert health.healthy
