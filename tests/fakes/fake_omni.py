"""The fake vLLM-Omni server: one handler (`FakeOmni.plan`) that turns an `httpx.Request` into
an outcome, and three ways to execute it — sync and async `httpx.MockTransport` handlers, and
the real-socket server in `fake_socket.serve_fake`.

Routes: /health, /metrics, /v1/models, /openapi.json, /v1/images/generations, /v1/images/edits,
/v1/chat/completions, /v1/audio/generate, /v1/videos (POST, GET list), /v1/videos/sync,
/v1/videos/{id} (GET, DELETE), /v1/videos/{id}/content.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable

import httpx

from tests.fakes import fake_image_routes as images
from tests.fakes import fake_video_routes as videos
from tests.fakes.fake_core import Drop, FakeCore, Hang, Outcome, Reply
from tests.fakes.fake_injector import FakeInjector
from tests.fakes.fake_openapi import openapi_document
from tests.fakes.fake_validation import Rejection

_VIDEO_ID = re.compile(r"^/v1/videos/(?P<id>[^/]+)(?P<content>/content)?$")
_RUNNING_ON: set[asyncio.Task[None]] = set()  # run-on computations, referenced until done
_GARBAGE = b"\x89<html><body>upstream exploded</body></html>\x00\xff not json"

_POSTS: dict[str, Callable[[FakeCore, httpx.Request], Reply]] = {
    "/v1/images/generations": images.images_generations,
    "/v1/images/edits": images.images_edits,
    "/v1/chat/completions": images.chat_completions,
    "/v1/audio/generate": images.audio_generate,
    "/v1/videos": videos.create_video,
    "/v1/videos/sync": videos.video_sync,
}


class FakeOmni(FakeCore):
    """A scriptable stand-in for `vllm serve <model> --omni`. See `FakeConfig` / `FakeFaults`."""

    # ------------------------------------------------------------------ the one handler

    def plan(self, request: httpx.Request) -> Outcome:
        """Decide the answer to one request (validation, state changes, faults)."""
        method, path = request.method.upper(), request.url.path
        with self.lock:
            self.state.requests_total += 1
            if method == "POST":
                self.state.posts_total += 1
                every = self.config.faults.drops_requests
                if every and self.state.posts_total % every == 0:
                    self.state.dropped += 1
                    return Drop(f"{method} {path}")
        outcome = self._route(method, path, request)
        if isinstance(outcome, Reply):
            outcome = self._decorate(method, outcome)
        return outcome

    def _route(self, method: str, path: str, request: httpx.Request) -> Outcome:
        try:
            if path == "/health" and method == "GET":
                return self._health()
            if path == "/metrics" and method == "GET":
                return Reply(httpx.Response(200, text=self.metrics_text()), "GET /metrics")
            if path == "/v1/models" and method == "GET":
                return self.ok_json(self._models(), "GET /v1/models")
            if path == "/openapi.json" and method == "GET":
                return self.ok_json(openapi_document(self.config), "GET /openapi.json")
            if path == "/v1/videos" and method == "GET":
                return videos.list_videos(self, request)
            if method == "POST" and path in _POSTS:
                self._check_payload(request)
                injected = self._injector().before(f"{method} {path}", request) if (
                    self.config.injector is not None) else None  # fmt: skip
                if injected is not None:
                    return injected
                return _POSTS[path](self, request)
            match = _VIDEO_ID.match(path)
            if match is not None and path != "/v1/videos/sync":
                video_id = match.group("id")
                if match.group("content") and method == "GET":
                    return videos.video_content(self, video_id)
                if not match.group("content") and method == "GET":
                    return videos.get_video(self, video_id)
                if not match.group("content") and method == "DELETE":
                    return videos.delete_video(self, video_id)
            known = path in _POSTS or path in {"/health", "/metrics", "/v1/models"} or match
            raise Rejection(405 if known else 404, "Method Not Allowed" if known else "Not Found")
        except Rejection as exc:
            return Reply(self.reject(exc), f"{method} {path}")

    def _injector(self) -> FakeInjector:
        with self.lock:
            found: FakeInjector | None = getattr(self, "_fake_injector", None)
            if found is None:
                found = FakeInjector(self)
                self._fake_injector = found
            return found

    def _decorate(self, method: str, reply: Reply) -> Reply:
        response = reply.response
        if self.config.faults.garbage_responses and reply.route != "GET /health":
            response = httpx.Response(
                200, content=_GARBAGE, headers={"content-type": "application/json"}
            )
        if "x-request-id" not in response.headers:
            response.headers["x-request-id"] = self.next_id("fake-req-")
        work = reply.work_s + (self.spike_extra_s() if method == "POST" else 0.0)
        return Reply(response, reply.route, work)

    def _check_payload(self, request: httpx.Request) -> None:
        size, cap = len(request.content), self.config.max_upload_bytes
        status = self.config.faults.payload_limit_status
        if size > cap and status != 200:
            raise Rejection(status, f"Request body of {size} bytes exceeds the {cap} byte limit.")

    def _health(self) -> Outcome:
        with self.lock:
            hangs, unhealthy = self.state.health_hangs, self.state.unhealthy
        if unhealthy:
            reply = httpx.Response(503, json={"status": "unhealthy"})
        else:
            reply = httpx.Response(200, json={"status": "healthy"})
        if hangs:
            return Hang(self.config.hang_s, reply, "GET /health")
        return Reply(reply, "GET /health")

    def _models(self) -> dict[str, object]:
        card = {
            "id": self.config.model_name,
            "object": "model",
            "created": int(time.time()),
            "owned_by": "vllm-omni",
            "root": f"/models/{self.config.model_name}",
            "parent": None,
            "permission": [],
        }
        return {"object": "list", "data": [card]}

    def metrics_text(self) -> str:
        """Prometheus text with vLLM-Omni-like families and a fake process RSS."""
        with self.lock:
            s = self.state
            label = f'model_name="{self.config.model_name}"'
            rss = self.config.base_rss_bytes + s.leaked_bytes
            jobs_running, jobs_queued, jobs_done = videos.job_work(self)
            lines = [
                "# TYPE vllm_omni:num_requests_running gauge",
                f"vllm_omni:num_requests_running{{{label}}} {s.running + jobs_running}",
                "# TYPE vllm_omni:num_requests_waiting gauge",
                f"vllm_omni:num_requests_waiting{{{label}}} {s.waiting + jobs_queued + s.stuck}",
                "# TYPE vllm_omni:diffusion_exec_s histogram",
                f'vllm_omni:diffusion_exec_s_count{{{label},stage="0",replica="0"}} '
                f"{s.executions + jobs_done}",
                "# TYPE vllm_omni:requests_success_total counter",
                f'vllm_omni:requests_success_total{{{label},finished_reason="stop"}} {s.completed}',
                f'vllm_omni:requests_success_total{{{label},finished_reason="abort"}} {s.aborted}',
                "# TYPE vllm_omni:e2e_request_latency_s summary",
                f"vllm_omni:e2e_request_latency_s_sum{{{label}}} {s.latency_sum_s:.6f}",
                f"vllm_omni:e2e_request_latency_s_count{{{label}}} {s.completed}",
                "# TYPE process_resident_memory_bytes gauge",
                f"process_resident_memory_bytes {rss}",
                "# TYPE process_open_fds gauge",
                "process_open_fds 64",
                "# TYPE omni_fake_temp_files gauge",
                f"omni_fake_temp_files {len(s.temp_files)}",
            ]
        return "\n".join(lines) + "\n"

    # ------------------------------------------------------------------ execution

    def begin(self) -> float:
        with self.lock:
            self.state.running += 1
        return time.perf_counter()

    def end(self, reply: Reply, started: float, *, aborted: bool) -> None:
        with self.lock:
            self.state.running -= 1
            if not aborted:
                self.state.executions += reply.work_s > 0
                self.state.by_route[reply.route] += 1
                self.state.by_status[reply.response.status_code] += 1
                if reply.response.is_success and reply.route.startswith("POST "):
                    self.state.completed += 1
                    self.state.latency_sum_s += time.perf_counter() - started
        if aborted:
            self.record_abort(reply.route)

    def handle(self, request: httpx.Request) -> httpx.Response:
        """Sync executor (for `httpx.MockTransport` in a sync client, and the socket server's
        fallback): work and hangs block the calling thread; a `stop()` wakes them."""
        outcome = self.plan(request)
        if isinstance(outcome, Drop):
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
        if isinstance(outcome, Hang):
            self.stopped.wait(outcome.seconds)
            return outcome.response
        started = self.begin()
        if outcome.work_s > 0:
            self.stopped.wait(outcome.work_s)
        self.end(outcome, started, aborted=False)
        return outcome.response

    async def handle_async(self, request: httpx.Request) -> httpx.Response:
        """Async executor: cancelling the caller during simulated work is a client disconnect."""
        outcome = self.plan(request)
        if isinstance(outcome, Drop):
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
        if isinstance(outcome, Hang):
            await asyncio.sleep(outcome.seconds)
            return outcome.response
        started = self.begin()
        try:
            if outcome.work_s > 0:
                await asyncio.sleep(outcome.work_s)
        except asyncio.CancelledError:
            self.end(outcome, started, aborted=True)
            if self.config.faults.computes_after_cancel:
                left = outcome.work_s - (time.perf_counter() - started)
                self.run_on(left, None)
            raise
        self.end(outcome, started, aborted=False)
        return outcome.response

    def run_on(self, work_s: float, worker: asyncio.Lock | None) -> None:
        """computes_after_cancel / runs_cancelled_queued: the cut work goes on computing in the
        background (behind ``worker`` when there is one), busy on /metrics, then counted."""
        if work_s <= 0:
            return

        async def compute() -> None:
            with self.lock:
                self.state.waiting += 1
            if worker is not None:
                await worker.acquire()
            with self.lock:
                self.state.waiting -= 1
                self.state.running += 1
            if self.config.injector is not None:
                self._injector().ran()
            try:
                await asyncio.sleep(work_s)
            finally:
                if worker is not None:
                    worker.release()
                with self.lock:
                    self.state.running -= 1
                    self.state.executions += 1

        task = asyncio.get_running_loop().create_task(compute())
        _RUNNING_ON.add(task)
        task.add_done_callback(_RUNNING_ON.discard)

    def transport(self) -> httpx.MockTransport:
        """In-process transport for `OmniClient(..., transport=fake.transport())`."""
        return httpx.MockTransport(self.handle_async)

    def sync_transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def stop(self) -> None:
        """Wake every blocked hang or simulated work (used when a served fake shuts down)."""
        self.stopped.set()
