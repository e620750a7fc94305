"""State and shared plumbing of the fake server: the inspectable `FakeState`, video job records,
the outcome types a route returns (`Reply`, `Drop`, `Hang`), and body parsing / error rendering
that every route uses."""

from __future__ import annotations

import base64
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from tests.fakes.fake_config import FakeConfig
from tests.fakes.fake_media import FormData, parse_form, perturb_image, rng_for
from tests.fakes.fake_validation import Checks, Rejection, rejection_from

B = TypeVar("B", bound=BaseModel)

# Statuses that mean "the server refused the request as invalid" (what unhealthy_after_rejection
# reacts to); 404 for an unknown id is not a rejection of the request's shape.
REJECTION_STATUSES = frozenset({400, 413, 422})


@dataclass
class FakeJob:
    """One async video job; its status is derived from the clock, not from a worker thread."""

    id: str
    created_at: float  # fake clock
    created_unix: int
    prompt: str
    width: int
    height: int
    num_frames: int
    fps: int
    seconds: str
    identity: tuple[object, ...]
    failed_message: str | None = None
    reported_completed: bool = False
    cancel_ignored: bool = False  # a DELETE was answered OK but the job kept running
    uncounted: bool = False  # its execution never reaches the execution count
    held_until: float = 0.0  # fake clock: in progress until then (an injected hang)
    stuck: bool = False  # in progress forever (a leaked faulted job)
    listed_as: str | None = None  # the job listing shows this status instead of its own


@dataclass
class FakeState:
    """Everything a test may assert on. Read it under `FakeOmni.lock` when a server thread runs."""

    requests_total: int = 0
    posts_total: int = 0
    by_route: Counter[str] = field(default_factory=Counter)
    by_status: Counter[int] = field(default_factory=Counter)
    rejected: int = 0
    completed: int = 0  # POST (generation) requests answered 2xx after their simulated work
    aborted: int = 0  # client went away during the simulated work
    dropped: int = 0  # connections closed without an answer (drops_requests)
    cancelled_jobs: int = 0
    running: int = 0
    waiting: int = 0  # sync requests queued for the worker (SerialFakeOmni)
    executions: int = 0  # finished simulated computations, cut ones that ran on included
    jobs: dict[str, FakeJob] = field(default_factory=dict)
    ghost_jobs: dict[str, FakeJob] = field(default_factory=dict)  # DELETEd, still computing
    executed_jobs: set[str] = field(default_factory=set)  # jobs whose computation finished
    temp_files: list[Path] = field(default_factory=list)
    leaked_bytes: int = 0
    stuck: int = 0  # aborted requests the scheduler still counts (keeps_aborted_in_scheduler)
    unhealthy: bool = False
    health_hangs: bool = False
    latency_sum_s: float = 0.0
    internal_errors: list[str] = field(default_factory=list)  # bugs of the fake itself (socket)
    faults_fired: int = 0  # injected faults the fake acted out (FakeConfig.injector)


@dataclass(frozen=True)
class Reply:
    response: httpx.Response
    route: str
    work_s: float = 0.0  # simulated compute before the answer; a disconnect during it aborts


@dataclass(frozen=True)
class Drop:
    """Close the connection without any answer."""

    route: str


@dataclass(frozen=True)
class Hang:
    """Block for `seconds` (a stop wakes it), then answer."""

    seconds: float
    response: httpx.Response
    route: str


Outcome = Reply | Drop | Hang


def wrong_output(response: httpx.Response) -> httpx.Response:
    """``peers_answer_wrong``: the same answer with every image's pixels moved (PNG ``b64_json``
    items), or, for any other body, its bytes changed: a success that is not the request's own."""
    try:
        doc = response.json()
    except ValueError:
        return httpx.Response(response.status_code, content=response.content + b"\x00",
                              headers=response.headers)  # fmt: skip
    items = doc.get("data") if isinstance(doc, dict) else None
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("b64_json"):
            moved = perturb_image(base64.b64decode(item["b64_json"]), 40, rng_for("wrong"))
            item["b64_json"] = base64.b64encode(moved).decode()
    return httpx.Response(response.status_code, json=doc)


class FakeCore:
    """Config, state and helpers shared by the routes; `FakeOmni` adds routing and execution."""

    def __init__(
        self, config: FakeConfig | None = None, *, clock: Callable[[], float] | None = None
    ):
        self.config = config or FakeConfig()
        self.clock = clock or time.monotonic
        self.state = FakeState()
        self.lock = threading.RLock()
        self.stopped = threading.Event()
        self.origin = self.clock()
        self._ids = 0

    @property
    def checks(self) -> Checks:
        return Checks(self.config)  # rebuilt per use: faults may be toggled mid-run

    def reset_origin(self) -> None:
        self.origin = self.clock()

    def next_id(self, prefix: str) -> str:
        with self.lock:
            self._ids += 1
            return f"{prefix}{self._ids:06d}"

    # ------------------------------------------------------------------ answers

    def ok_json(self, payload: Any, route: str, work_s: float = 0.0) -> Reply:
        return Reply(httpx.Response(200, json=payload), route, work_s)

    def error(self, status: int, message: str, param: str | None = None) -> httpx.Response:
        with self.lock:
            if status in REJECTION_STATUSES:
                self.state.rejected += 1
                if self.config.faults.unhealthy_after_rejection:
                    self.state.unhealthy = True
        phrase = HTTPStatus(status).phrase
        if self.config.faults.vague_errors and status == 400:
            message, param = "Invalid request parameters", None
        if self.config.faults.error_without_envelope:
            return httpx.Response(status, text=phrase, headers={"content-type": "text/plain"})
        body = {"error": {"message": message, "type": phrase, "param": param, "code": status}}
        return httpx.Response(status, json=body)

    def reject(self, exc: Rejection) -> httpx.Response:
        return self.error(exc.status, exc.message, exc.param)

    # ------------------------------------------------------------------ bodies

    def json_model(self, request: httpx.Request, model: type[B], what: str) -> B:
        content_type = request.headers.get("content-type", "")
        if not content_type.startswith("application/json"):
            raise Rejection(400, f"Unsupported content type '{content_type}', expected JSON")
        try:
            doc = json.loads(request.content)
        except ValueError as exc:
            raise Rejection(400, f"JSON decode error: {exc}") from exc
        return validated(model, doc, what)

    def form(self, request: httpx.Request) -> FormData:
        form = parse_form(request.headers.get("content-type", ""), request.content)
        if form is None:
            raise Rejection(400, "Expected a multipart/form-data or urlencoded form body")
        return form

    # ------------------------------------------------------------------ side effects

    def leave_temp_file(self, kind: str) -> None:
        """leaves_temp_file: the 'server' forgets to remove its per-request scratch file."""
        if self.config.faults.leaves_temp_file and self.config.temp_dir is not None:
            self._write_temp(f"omni-fake-{kind}-{self.next_id('')}.tmp")

    def _write_temp(self, name: str) -> None:
        if self.config.temp_dir is None:  # fault switched on later without a directory
            return
        path = self.config.temp_dir / name
        path.write_bytes(b"scratch")
        with self.lock:
            self.state.temp_files.append(path)

    def record_abort(self, route: str) -> None:
        with self.lock:
            self.state.aborted += 1
            if self.config.faults.keeps_aborted_in_scheduler:
                self.state.stuck += 1
            if self.config.faults.leaks_state_after_abort:
                self.config.faults.seed_offset += 1
            if self.config.faults.leaks_per_abort:
                self.state.leaked_bytes += self.config.leak_bytes_per_abort
            if self.config.faults.hangs_after_disconnect:
                self.state.health_hangs = True
        if self.config.faults.leaks_per_abort:
            self._write_temp(f"omni-fake-aborted-{self.next_id('')}.tmp")

    def spike_extra_s(self) -> float:
        spike = self.config.faults.latency_spike
        if spike is None:
            return 0.0
        age = self.clock() - self.origin
        return spike.extra_s if spike.start_s <= age < spike.start_s + spike.duration_s else 0.0


def validated(model: type[B], doc: Any, what: str) -> B:
    try:
        parsed = model.model_validate(doc)
    except ValidationError as exc:
        raise rejection_from(exc, what) from exc
    for name in ("prompt", "input"):  # like vLLM-Omni's validators: text must be there
        value = getattr(parsed, name, None)
        if isinstance(value, str) and not value.strip():
            raise Rejection(400, f"{name} cannot be empty", name)
    return parsed
