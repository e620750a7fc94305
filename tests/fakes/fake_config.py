"""Configuration of the fake vLLM-Omni server: model limits, simulated timings, scripted faults.

Every fault is off by default, so `FakeConfig()` behaves like a healthy, strict server.
Fields stay mutable on purpose: a test may switch a fault on in the middle of a run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, model_validator


class LatencySpike(BaseModel):
    """Extra latency added to generation requests that arrive inside a time window, measured in
    seconds from the fake's creation (`FakeOmni.reset_origin()` restarts the count)."""

    start_s: float = Field(ge=0)
    duration_s: float = Field(gt=0)
    extra_s: float = Field(gt=0)


class FakeFaults(BaseModel):
    """Scripted misbehaviours; each one is what a qualification gate must catch."""

    accepts_out_of_range: bool = False  # skip range/alignment checks (types still checked)
    error_without_envelope: bool = False  # errors are text/plain with only the HTTP phrase
    payload_limit_status: Literal[413, 400, 200] = 413  # 200 = the cap is not enforced
    creates_job_for_invalid_async: bool = False  # a rejected POST /v1/videos still stores a job
    leaves_temp_file: bool = False  # each generation request leaves a file in temp_dir
    unhealthy_after_rejection: bool = False  # /health turns 503 after any rejected request
    sync_async_bytes_differ: bool = False  # /v1/videos/sync bytes differ from the async job's
    ignores_cancellation: bool = False  # DELETE answers OK but the job completes and serves
    two_terminal_states: bool = False  # a job reports completed once, then failed
    leaks_per_abort: bool = False  # each aborted request grows fake RSS and leaves a temp file
    keeps_aborted_in_scheduler: bool = False  # each abort leaves a waiting entry in /metrics
    leaks_state_after_abort: bool = False  # after each abort images come out of another seed
    hangs_after_disconnect: bool = False  # after a client disconnect /health blocks (hang_s)
    # An in-flight request whose client disconnected, or an in-progress job that was DELETEd,
    # keeps computing to its end: /metrics stays busy and the execution is counted.
    computes_after_cancel: bool = False
    # A request or job cancelled while still queued runs anyway, later (queued-job variant).
    runs_cancelled_queued: bool = False
    # A job DELETEd while queued runs anyway behind the job before it (queued, then in progress,
    # for one more video_run_s) and is never counted as an execution: only /metrics gauges and
    # CPU time watched from the cancel on can see it.
    cancelled_queued_runs_unseen: bool = False
    latency_spike: LatencySpike | None = None
    drops_requests: int = Field(default=0, ge=0)  # every Nth POST closed unanswered; 0 = off
    garbage_responses: bool = False  # every route but /health answers 200 with non-JSON bytes
    vague_errors: bool = False  # 400 envelopes: no param, only "Invalid request parameters"
    no_video_list: bool = False  # GET /v1/videos answers 405 (no job list to compare)
    sync_video_not_served: bool = False  # POST /v1/videos/sync answers 404
    mp4_without_sample_table: bool = False  # MP4s carry no stsz box (frame count unverifiable)
    # Image generations that do not do what was asked (reference parity must see it):
    seed_offset: int = 0  # generate with seed + offset
    steps_offset: int = 0  # generate with num_inference_steps + offset
    size_offset: int = 0  # answer images this many pixels wider and taller
    extra_outputs: int = 0  # answer this many images more than n
    # Fast paths that do not do what their flag says (candidate parity must see it):
    ignores_dtype: bool = False  # serves bf16 whatever `dtype` asks (outputs as the baseline's)
    run_jitter: int = Field(default=0, ge=0)  # each answer moves pixels up to ±N levels at random
    # Concurrency that leaks between requests (the isolation gate must see it). The batch ones
    # need `BatchingFakeOmni`; solo requests are served right, only requests served together not.
    batch_first_settings: bool = False  # a batch takes anyone and computes all with the head's
    #                                     steps, guidance, size and n (own seed and prompt)
    swaps_batched_outputs: bool = False  # the first two requests of a batch get each other's answer
    reorders_batched_outputs: bool = False  # a batched request asking n > 1 gets them reversed
    serializes_requests: bool = False  # one request in the server at a time; the next is not
    #                                    even accepted (never waiting) until the last is answered
    async_content_crossed: bool = False  # a job's content is that of a job that ran beside it
    # The injector stand-in (`FakeConfig.injector`, tests/fakes/fake_injector.py) misbehaving:
    fault_answered_ok: bool = False  # the faulted request is answered 200 with an image
    hangs_after_fault: bool = False  # after a fault /health blocks (hang_s): never comes back
    fault_fails_peers: bool = False  # a fault fails every request arriving soon after it
    leaks_state_after_fault: bool = False  # after each fault images come out of another seed
    faulted_job_stuck: bool = False  # the faulted async job stays in_progress forever
    faulted_job_listed_unfinished: bool = False  # it fails, but the listing shows it in_progress
    # A request served beside an abort (computing while another is cut or DELETEd) or beside an
    # injected fault (arriving while the faulted request is in flight) answers 200 with other
    # output than alone (pixels moved; a job's video of another identity): "succeeded", yet not
    # its own output.
    peers_answer_wrong: bool = False


class FakeInjection(BaseModel):
    """Act as a server launched with omniqual's fault injector (its two files)."""

    control: Path
    record: Path
    # The stages its release has hooks for (None: all): a fault armed elsewhere never fires.
    stages: tuple[str, ...] | None = None


class FakeConfig(BaseModel):
    """The fake model's contract and timings. Defaults are small so that tests stay cheap."""

    model_name: str = "fake/omni-tiny"
    faults: FakeFaults = Field(default_factory=FakeFaults)
    injector: FakeInjection | None = None

    max_n: int = 10
    min_steps: int = 1
    max_steps: int = 200
    max_guidance: float = 20.0
    min_side: int = 16
    max_side: int = 2048
    size_multiple: int = 16
    max_pixels: int = 7680 * 4320
    default_image_size: tuple[int, int] = (64, 64)
    max_edit_images: int = 1
    max_upload_bytes: int = 8 * 1024 * 1024

    default_video_size: tuple[int, int] = (64, 64)
    default_num_frames: int = 9
    default_fps: int = 24
    max_num_frames: int = 257

    audio_sample_rate: int = 44_100
    audio_channels: int = 2
    default_audio_s: float = 1.0
    max_audio_s: float = 10.0

    dtype: Literal["bf16", "fp32"] = "bf16"  # fp32 moves pixels slightly, seed-deterministic
    image_work_s: float = 0.0  # simulated compute per image / chat request
    audio_work_s: float = 0.0
    video_queue_s: float = 0.02  # async job stays "queued" this long
    video_run_s: float = 0.1  # then "in_progress" this long; also the sync video compute time

    temp_dir: Path | None = None  # needed by leaves_temp_file and leaks_per_abort
    base_rss_bytes: int = 900 * 1024 * 1024
    leak_bytes_per_abort: int = 16 * 1024 * 1024
    hang_s: float = 3600.0  # how long a hanging /health blocks (a stop wakes it)

    @model_validator(mode="after")
    def _temp_dir_when_needed(self) -> FakeConfig:
        wants_files = self.faults.leaves_temp_file or self.faults.leaks_per_abort
        if wants_files and self.temp_dir is None:
            raise ValueError("leaves_temp_file / leaks_per_abort need temp_dir")
        return self
