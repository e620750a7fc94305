"""Fake routes for videos: the async job lifecycle (create, status, content, list, delete) and
the blocking `/v1/videos/sync`. Job status is derived from the fake clock: `queued` for
`video_queue_s`, `in_progress` for `video_run_s`, then `completed`."""

from __future__ import annotations

import hashlib
import json
import secrets
import time
import uuid
from dataclasses import dataclass
from typing import Any

import httpx

from tests.fakes.fake_core import FakeCore, FakeJob, Reply, validated
from tests.fakes.fake_media import FormData, image_size, make_mp4
from tests.fakes.fake_validation import Rejection, VideoForm, parse_json_dict, parse_size


@dataclass(frozen=True)
class VideoParams:
    prompt: str
    width: int
    height: int
    num_frames: int
    fps: int
    seconds: str
    identity: tuple[object, ...]


def parse_video(core: FakeCore, form: FormData) -> VideoParams:
    cfg, checks = core.config, core.checks
    body = validated(VideoForm, form.text_fields(), "VideoGenerationRequest")
    checks.model(body.model)
    if body.size is not None:
        width, height = checks.dims(*parse_size(body.size))
    else:
        width = body.width if body.width is not None else cfg.default_video_size[0]
        height = body.height if body.height is not None else cfg.default_video_size[1]
        width, height = checks.dims(width, height, "width")
    fps = body.fps if body.fps is not None else cfg.default_fps
    checks.in_range("fps", fps, 1, 120)
    frames = body.num_frames
    if frames is None:
        frames = int(body.seconds) * fps if body.seconds else cfg.default_num_frames
    checks.in_range("num_frames", frames, 1, cfg.max_num_frames)
    frames = max(1, min(frames, cfg.max_num_frames))
    frames = (frames // 4) * 4 + 1  # Wan-style 4k+1 rounding
    checks.sampling(
        body.num_inference_steps,
        ("guidance_scale", body.guidance_scale),
        ("guidance_scale_2", body.guidance_scale_2),
        ("true_cfg_scale", body.true_cfg_scale),
    )
    checks.in_range("boundary_ratio", body.boundary_ratio, 0, 1)
    extra = parse_json_dict(body.extra_params, "extra_params")
    parse_json_dict(body.lora, "lora")
    reference = b""
    for _, data in form.files.get("input_reference", []):
        if image_size(data) is None and data[4:8] != b"ftyp":
            raise Rejection(400, "Failed to open input_reference", "input_reference")
        reference = data
    seed = body.seed if body.seed is not None else secrets.randbits(32)
    identity = (
        body.prompt, width, height, frames, fps, body.num_inference_steps, seed,
        hashlib.sha256(reference).hexdigest(), json.dumps(extra, sort_keys=True),
    )  # fmt: skip
    seconds = body.seconds or str(max(1, round(frames / fps)))
    return VideoParams(body.prompt, width, height, frames, fps, seconds, identity)


def _new_job(core: FakeCore, params: VideoParams, failed: str | None = None) -> FakeJob:
    job = FakeJob(
        id=core.next_id("video_gen_"),
        created_at=core.clock(),
        created_unix=int(time.time()),
        prompt=params.prompt,
        width=params.width,
        height=params.height,
        num_frames=params.num_frames,
        fps=params.fps,
        seconds=params.seconds,
        identity=params.identity,
        failed_message=failed,
    )
    with core.lock:
        core.state.jobs[job.id] = job
    return job


def create_video(core: FakeCore, request: httpx.Request) -> Reply:
    form = core.form(request)
    try:
        params = parse_video(core, form)
    except Rejection as exc:
        if core.config.faults.creates_job_for_invalid_async:
            bogus = VideoParams(form.first("prompt") or "", 0, 0, 0, 0, "0", ("invalid",))
            _new_job(core, bogus, failed=f"invalid request: {exc.message}")
        raise
    job = _new_job(core, params)
    core.leave_temp_file("video")
    return core.ok_json(job_json(core, job, "queued"), "POST /v1/videos")


def faulted_job(core: FakeCore, request: httpx.Request, case_id: str, mode: str,
                hang_s: float) -> Reply:  # fmt: skip
    """``POST /v1/videos`` into an armed fault: the job is accepted, then fails as vLLM-Omni
    fails a job whose generation raised (after holding ``hang_s`` for a hang or a late fault),
    unless a scripted ``FakeFaults`` misbehaviour says otherwise."""
    faults = core.config.faults
    params = parse_video(core, core.form(request))
    message = None if faults.fault_answered_ok else f"omniqual injected fault: {case_id}"
    job = _new_job(core, params, failed=message)
    if mode in ("hang", "late"):
        job.held_until = core.clock() + hang_s
    job.stuck = faults.faulted_job_stuck
    if faults.faulted_job_listed_unfinished:
        job.listed_as = "in_progress"
    return core.ok_json(job_json(core, job, "queued"), "POST /v1/videos")


def job_status(core: FakeCore, job: FakeJob) -> str:
    if job.stuck or core.clock() < job.held_until:
        return "in_progress"
    if job.failed_message is not None:
        return "failed"
    age = core.clock() - job.created_at
    if age < core.config.video_queue_s:
        return "queued"
    if age < core.config.video_queue_s + core.config.video_run_s:
        return "in_progress"
    return "completed"


def job_json(core: FakeCore, job: FakeJob, status: str) -> dict[str, Any]:
    done = status == "completed"
    error = None if status != "failed" else {"code": 500, "message": job.failed_message}
    return {
        "id": job.id, "object": "video", "model": core.config.model_name, "prompt": job.prompt,
        "status": status, "size": f"{job.width}x{job.height}", "progress": 100 if done else 0,
        "seconds": job.seconds, "quality": "default", "created_at": job.created_unix,
        "completed_at": int(time.time()) if done else None, "remixed_from_video_id": None,
        "error": error, "media_type": "video/mp4", "expires_at": None,
        "file_name": f"{job.id}.mp4" if done else None,
        "inference_time_s": core.config.video_run_s if done else None,
        "stage_durations": {}, "peak_memory_mb": 0.0, "fps": job.fps,
        "num_frames": job.num_frames,
    }  # fmt: skip


def _find(core: FakeCore, video_id: str) -> FakeJob:
    with core.lock:
        job = core.state.jobs.get(video_id)
    if job is None:
        raise Rejection(404, "Video not found", "video_id")
    return job


def get_video(core: FakeCore, video_id: str) -> Reply:
    job = _find(core, video_id)
    status = job_status(core, job)
    if status == "completed" and core.config.faults.two_terminal_states:
        if job.reported_completed:
            job.failed_message = "generation failed after completion (two_terminal_states)"
            status = "failed"
        job.reported_completed = True
    code = 500 if status == "failed" else 200
    response = httpx.Response(code, json=job_json(core, job, status))
    return Reply(response, "GET /v1/videos/{id}")


def video_content(core: FakeCore, video_id: str) -> Reply:
    job = _find(core, video_id)
    status = job_status(core, job)
    if status == "failed":
        raise Rejection(422, "Video generation failed. Check job status for error details.")
    if status != "completed":
        raise Rejection(404, "Generation is still in-progress", "video_id")
    headers = {
        "content-type": "video/mp4",
        "content-disposition": f'attachment; filename="{job.id}.mp4"',
    }
    served = _beside(core, job) if core.config.faults.async_content_crossed else job
    response = httpx.Response(
        200,
        content=_mp4(core, served.num_frames, (served.width, served.height), served.identity),
        headers=headers,
    )
    return Reply(response, "GET /v1/videos/{id}/content")


def _beside(core: FakeCore, job: FakeJob) -> FakeJob:
    """async_content_crossed: the latest other live job that ran beside ``job`` (its queue and
    run windows overlap); ``job`` itself when none did (a job served alone stays right)."""
    window = core.config.video_queue_s + core.config.video_run_s
    with core.lock:
        others = [j for j in core.state.jobs.values()
                  if j.id != job.id and abs(j.created_at - job.created_at) < window]  # fmt: skip
    return others[-1] if others else job


def job_work(core: FakeCore) -> tuple[int, int, int]:
    """(running, queued, executed) over live and ghost jobs, by the fake clock; a job whose
    computation finished is remembered as executed even after it is deleted."""
    running = queued = 0
    with core.lock:
        for job in [*core.state.jobs.values(), *core.state.ghost_jobs.values()]:
            status = job_status(core, job)
            running += status == "in_progress"
            queued += status == "queued"
            if status == "completed" and not job.uncounted:
                core.state.executed_jobs.add(job.id)
        return running, queued, len(core.state.executed_jobs)


def delete_video(core: FakeCore, video_id: str) -> Reply:
    job = _find(core, video_id)
    status = job_status(core, job)
    running = status in {"queued", "in_progress"}
    faults = core.config.faults
    unseen = status == "queued" and faults.cancelled_queued_runs_unseen
    ghost = unseen or (status == "queued" and faults.runs_cancelled_queued) or (
        status == "in_progress" and faults.computes_after_cancel
    )
    job_work(core)
    with core.lock:
        if running and faults.peers_answer_wrong:  # the jobs beside it lose their own output
            for other in core.state.jobs.values():
                if other is not job and job_status(core, other) in ("queued", "in_progress"):
                    other.identity = (*other.identity, "beside a cancel")
        if running and core.config.faults.ignores_cancellation:
            job.cancel_ignored = True
        else:
            core.state.jobs.pop(video_id, None)
            core.state.cancelled_jobs += int(running)
            if running and faults.keeps_aborted_in_scheduler:
                core.state.stuck += 1
            if ghost:  # gone from the API, still computing behind it
                core.state.ghost_jobs[video_id] = job
            if unseen:  # it waits behind the job before it, then runs uncounted
                job.created_at += core.config.video_run_s
                job.uncounted = True
    body = {"id": video_id, "deleted": True, "object": "video.deleted"}
    return core.ok_json(body, "DELETE /v1/videos/{id}")


def _mp4(core: FakeCore, frames: int, size: tuple[int, int], identity: tuple[object, ...]) -> bytes:
    sample_table = not core.config.faults.mp4_without_sample_table
    return make_mp4(frames, *identity, size=size, sample_table=sample_table)


def list_videos(core: FakeCore, request: httpx.Request) -> Reply:
    if core.config.faults.no_video_list:
        raise Rejection(405, "Method Not Allowed")
    query = request.url.params
    order = query.get("order", "desc")
    if order not in {"asc", "desc"}:
        raise Rejection(400, "order: Input should be 'asc' or 'desc' [type=literal_error]", "order")
    try:
        limit = int(query.get("limit", "20"))
    except ValueError as exc:
        raise Rejection(400, "limit: Input should be a valid integer [type=int_parsing]") from exc
    core.checks.in_range("limit", limit, 0, 100)
    with core.lock:
        jobs = list(core.state.jobs.values())
    if order == "desc":
        jobs.reverse()
    after = query.get("after")
    if after is not None:
        ids = [j.id for j in jobs]
        jobs = jobs[ids.index(after) + 1 :] if after in ids else []
    page = jobs[: max(limit, 0)]
    data = [job_json(core, job, job.listed_as or job_status(core, job)) for job in page]
    body = {
        "object": "list",
        "data": data,
        "first_id": page[0].id if page else None,
        "last_id": page[-1].id if page else None,
        "has_more": len(jobs) > len(page),
    }
    return core.ok_json(body, "GET /v1/videos")


def video_sync(core: FakeCore, request: httpx.Request) -> Reply:
    if core.config.faults.sync_video_not_served:
        raise Rejection(404, "Not Found")
    params = parse_video(core, core.form(request))
    identity = params.identity
    if core.config.faults.sync_async_bytes_differ:
        identity = (*identity, uuid.uuid4().hex)
    core.leave_temp_file("video-sync")
    run_s = core.config.video_run_s
    headers = {
        "content-type": "video/mp4",
        "x-request-id": f"video_sync-{uuid.uuid4()}",
        "x-model": core.config.model_name,
        "x-inference-time-s": f"{run_s:.3f}",
        "x-stage-durations": json.dumps({"diffusion": run_s}, separators=(",", ":")),
        "x-peak-memory-mb": "0.0",
    }
    response = httpx.Response(
        200,
        content=_mp4(core, params.num_frames, (params.width, params.height), identity),
        headers=headers,
    )
    return Reply(response, "POST /v1/videos/sync", run_s)
