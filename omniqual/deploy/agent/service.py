"""What ``omniqual agent`` answers: one request in, one JSON answer out, no sockets.

:class:`AgentService` checks the bearer token first (a wrong or missing one is 401, whatever
the path), then routes:

- ``GET /v1/readings``: one observer sample of the watched tree (:class:`AgentReadings`);
- ``GET /v1/cpu``: the tree's CPU seconds alone (:class:`CpuReading`);
- ``GET /v1/identity``: the watched pid, host name, tree summary, omniqual version;
- ``POST /v1/fault/arm`` (a :class:`FaultArm` body) and ``POST /v1/fault/disarm``;
- ``GET /v1/fault/records?after=N``: the record lines after the first N.

The fault routes answer 404 when the agent was started without the fault files. A watched
process that is gone answers 200 with ``state: gone``.
"""

import json
import socket
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from urllib.parse import parse_qs, urlsplit

import psutil
from pydantic import BaseModel, ValidationError

from omniqual import __version__
from omniqual.deploy.agent import fault_files
from omniqual.deploy.agent.token import bearer_matches
from omniqual.deploy.observer import open_nvml, sample_tree, tree_cpu_seconds
from omniqual.deploy.process_tree import is_running
from omniqual.domain.agent import (
    AgentIdentity,
    AgentProblem,
    AgentReadings,
    CpuReading,
    DirCount,
    FaultAnswer,
    GpuReading,
    TreeState,
)
from omniqual.domain.fault_injection import FaultArm

MAX_BODY_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class AgentConfig:
    pid: int
    token: str = field(repr=False)
    watch_dirs: tuple[Path, ...] = ()
    fault_control: Path | None = None
    fault_record: Path | None = None
    gpu: bool = True


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    body: bytes
    content_type: str = "application/json"


def _json(status: int, model: BaseModel) -> Answer:
    return Answer(status, model.model_dump_json().encode())


def _problem(status: int, error: str) -> Answer:
    return _json(status, AgentProblem(error=error))


class AgentService:
    """The agent's routes over one watched process tree."""

    def __init__(self, config: AgentConfig) -> None:
        self.config = config
        self._nvml: ModuleType | None = open_nvml() if config.gpu else None

    def handle(self, method: str, target: str, authorization: str | None,
               body: bytes = b"") -> Answer:  # fmt: skip
        if not bearer_matches(authorization, self.config.token):
            return _problem(401, "a valid Authorization: Bearer token is required")
        parts = urlsplit(target)
        route = (method.upper(), parts.path.rstrip("/") or "/")
        if route == ("GET", "/v1/readings"):
            return _json(200, self.readings())
        if route == ("GET", "/v1/cpu"):
            cpu = tree_cpu_seconds(self.config.pid)
            return _json(200, CpuReading(state=self._state(), cpu_s=cpu))
        if route == ("GET", "/v1/identity"):
            return _json(200, self.identity())
        if route[1].startswith("/v1/fault/"):
            return self._fault(route, parts.query, body)
        return _no_route(route)

    def _state(self) -> TreeState:
        return TreeState.RUNNING if is_running(self.config.pid) else TreeState.GONE

    def readings(self) -> AgentReadings:
        state = self._state()
        sample = sample_tree(self.config.pid, watch_dirs=self.config.watch_dirs, nvml=self._nvml)
        gone = state is TreeState.GONE
        return AgentReadings(
            state=state, pid=self.config.pid, at_unix=sample.at,
            processes=0 if gone else sample.processes,
            rss_bytes=0 if gone else sample.rss_bytes,
            pss_bytes=None if gone else sample.pss_bytes,
            uss_bytes=None if gone else sample.uss_bytes,
            open_fds=None if gone else sample.open_fds, threads=0 if gone else sample.threads,
            cpu_s=None if gone else sample.cpu_s,
            dir_files=tuple(DirCount(path=p, files=n) for p, n in sample.dir_files),
            gpus=tuple(GpuReading(index=g.index, used_bytes=g.used_bytes,
                                  total_bytes=g.total_bytes, tree_used_bytes=g.tree_used_bytes)
                       for g in sample.gpus),
            nvml=sample.nvml,
        )  # fmt: skip

    def identity(self) -> AgentIdentity:
        name: str | None = None
        processes = 0
        state = self._state()
        if state is TreeState.RUNNING:
            try:
                root = psutil.Process(self.config.pid)
                name = root.name()
                processes = 1 + len(root.children(recursive=True))
            except psutil.Error:
                state = TreeState.GONE
        return AgentIdentity(
            pid=self.config.pid, host=socket.gethostname(), state=state, process_name=name,
            processes=processes, watch_dirs=tuple(str(d) for d in self.config.watch_dirs),
            fault_control=self.config.fault_control is not None, omniqual_version=__version__,
        )  # fmt: skip

    def _fault(self, route: tuple[str, str], query: str, body: bytes) -> Answer:
        control, record = self.config.fault_control, self.config.fault_record
        if control is None or record is None:
            return _problem(404, "this agent was started without --fault-control/--fault-record")
        if route == ("POST", "/v1/fault/arm"):
            if len(body) > MAX_BODY_BYTES:
                return _problem(413, "the arm body is too large")
            try:
                fault = FaultArm.model_validate_json(body)
            except ValidationError as exc:
                return _problem(422, f"not a FaultArm: {_errors(exc)}")
            fault_files.arm(control, fault)
            return _json(200, FaultAnswer(armed=fault.arm_id))
        if route == ("POST", "/v1/fault/disarm"):
            fault_files.disarm(control)
            return _json(200, FaultAnswer(armed=None))
        if route == ("GET", "/v1/fault/records"):
            raw = parse_qs(query).get("after", ["0"])[-1]
            if not raw.isdigit():
                return _problem(422, "after must be a whole number of lines")
            return _json(200, fault_files.records_after(record, int(raw)))
        return _no_route(route)


_PATHS = frozenset({"/v1/readings", "/v1/cpu", "/v1/identity", "/v1/fault/arm",
                    "/v1/fault/disarm", "/v1/fault/records"})  # fmt: skip


def _no_route(route: tuple[str, str]) -> Answer:
    if route[1] in _PATHS:
        return _problem(405, f"{route[0]} is not allowed on {route[1]}")
    return _problem(404, f"no route {route[1]}")


def _errors(exc: ValidationError) -> str:
    return json.dumps([{"loc": list(e["loc"]), "msg": e["msg"]} for e in exc.errors()])
