"""A fake launch for the fault-injection gate whose server has a real process tree (no sockets).

Each launch starts a small tree: a root Python process (the "API server") and a ``sleep``
worker under it; with ``orphan`` also a helper in a session of its own that outlives the root.
The root exits as soon as its worker dies, as a vLLM-Omni server on the CPU target does (its
pipeline runs in the server's own process tree, so a worker's end takes the server with it). The
HTTP side is the in-process ``FakeOmni`` carrying the injector, wrapped by a transport that acts
out what the in-process fake cannot: a worker's exit (the worker dies, the tree exits, the
faulted request's connection drops), a worker held for the harness's SIGKILL (the fired record
names the worker's pid; the request drops when it dies, or completes when the hold ends, as the
real injector's hang returns), and descriptors the tree opens on each fault (``fds_per_fault``,
a leak a per-case baseline never sees). A fault targets the request sent with the arm's
``request_seed`` where it names one, else the first generation request after the arming.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx

from omniqual.checks.base import CheckOutcome, PointLaunch, TargetInfo
from omniqual.checks.fault_injection import FaultInjectionCheck, FaultInjectionParams
from omniqual.client import ClientTimeouts, OmniClient
from omniqual.deploy.fault_control import FaultChannel
from omniqual.deploy.fault_injector.core import Arm, ControlReader, Injector
from omniqual.deploy.launcher import StartupOutcome
from omniqual.domain.fault_injection import CONTROL_ENV, RECORD_ENV
from omniqual.domain.gate import GateSpec
from omniqual.domain.matrix import RestartPolicy
from omniqual.domain.recipe import LaunchRecipe, RecipeKind
from tests.fakes.check_context import context
from tests.fakes.fake_config import FakeConfig, FakeInjection
from tests.fakes.fake_omni import FakeOmni

URL = "http://fake-tree.invalid"
_KILL = os.kill  # the fake's own kills, whatever a test patches os.kill with
GENERATIONS = ("/v1/images/generations", "/v1/videos/sync", "/v1/videos")
ROOT = r"""
import os, subprocess, sys, threading
worker = subprocess.Popen(["sleep", "600"])
orphan = sys.argv[1] == "orphan"
helper = subprocess.Popen(["sleep", "601"], start_new_session=True) if orphan else None
print(worker.pid, helper.pid if helper else 0, flush=True)
held = []
def serve():
    for line in sys.stdin:
        held.extend(os.open(os.devnull, os.O_RDONLY) for _ in range(int(line)))
        print("ok", flush=True)
threading.Thread(target=serve, daemon=True).start()
worker.wait()
os._exit(0)
"""


def own_pid_namespace() -> str:
    return os.readlink("/proc/self/ns/pid")


class ServerTree:
    """The real processes of one fake launch; every one of them is killed on ``close``."""

    def __init__(self, *, orphan: bool) -> None:
        self.root = subprocess.Popen(
            [sys.executable, "-c", ROOT, "orphan" if orphan else "clean"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
        assert self.root.stdout is not None
        worker, helper = self.root.stdout.readline().split()
        self.worker, self.helper = int(worker), int(helper) or None

    def open_fds(self, count: int) -> None:
        assert self.root.stdin is not None and self.root.stdout is not None
        self.root.stdin.write(f"{count}\n")
        self.root.stdin.flush()
        assert self.root.stdout.readline().strip() == "ok"

    def end_worker(self) -> None:
        _KILL(self.worker, signal.SIGKILL)

    def worker_gone(self) -> bool:
        try:
            with open(f"/proc/{self.worker}/stat") as stat:
                return stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
        except OSError:
            return True

    def gone(self) -> bool:
        return self.root.poll() is not None

    def close(self) -> None:
        for pid in (self.worker, self.helper):
            if pid is not None:
                with suppress(ProcessLookupError):
                    _KILL(pid, signal.SIGKILL)
        if self.root.poll() is None:
            _KILL(self.root.pid, signal.SIGKILL)
        self.root.wait()
        for pipe in (self.root.stdin, self.root.stdout):
            if pipe is not None:
                pipe.close()


@dataclass
class TreeLaunches:
    """``serve_point`` for the gate: each launch a new ``ServerTree`` and ``FakeOmni`` on the
    injector files the derived recipe's environment names."""

    orphan: bool = False
    fds_per_fault: int = 0
    pid_ns: str | None = None  # the namespace the fired record names (None: ours)
    fired_pid: int | None = None  # the pid the fired record names (None: the tree's worker)
    trees: list[ServerTree] = field(default_factory=list)
    channel: FaultChannel = field(default_factory=lambda: FaultChannel(Path("-"), Path("-")))

    @asynccontextmanager
    async def serve(self, recipe: LaunchRecipe) -> AsyncIterator[PointLaunch]:
        self.channel = FaultChannel(Path(recipe.env[CONTROL_ENV]), Path(recipe.env[RECORD_ENV]))
        tree = ServerTree(orphan=self.orphan)
        self.trees.append(tree)
        server = FakeOmni(FakeConfig(image_work_s=0.05, injector=FakeInjection(
            control=self.channel.control, record=self.channel.record)))  # fmt: skip
        server._injector()  # the injector loads with the server
        transport = _TreeTransport(server.transport(), tree, self)
        startup = StartupOutcome(
            recipe_id=recipe.id, expected=recipe.expect, became_ready=True, reason="ready",
            exit_code=None, elapsed_s=0.1, log_path=None, log_tail=(), command=("fake",),
            expected_error_matched=None)  # fmt: skip
        try:
            yield PointLaunch(
                startup, TargetInfo(url=URL, pid=tree.root.pid), None,
                lambda: OmniClient(URL, transport=transport, timeouts=ClientTimeouts()))
        finally:
            tree.close()


class _TreeTransport(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport, tree: ServerTree,
                 launches: TreeLaunches) -> None:  # fmt: skip
        self.inner, self.tree, self.launches = inner, tree, launches
        channel = launches.channel
        self.reader = ControlReader(channel.control)
        self.claimer = Injector(channel.control, channel.record)
        self.seen: set[str] = set()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.tree.gone():
            raise httpx.ConnectError("connection refused", request=request)
        arm = self.reader.current()
        if (request.method == "POST" and request.url.path in GENERATIONS and arm is not None
                and arm.arm_id not in self.seen and _targets(arm, request)):  # fmt: skip
            self.seen.add(arm.arm_id)
            if arm.mode == "exit" or arm.case_id == "worker-sigkill":
                return await self._end_worker(arm, request)
            if self.launches.fds_per_fault:
                self.tree.open_fds(self.launches.fds_per_fault)
        return await self.inner.handle_async_request(request)

    async def _end_worker(self, arm: Arm, request: httpx.Request) -> httpx.Response:
        if not self.claimer.claim(arm):
            return await self.inner.handle_async_request(request)
        self._record("fired", arm)
        if arm.mode == "exit":
            self.tree.end_worker()
        deadline = time.monotonic() + (arm.hang_s if arm.mode == "hang" else 5.0)
        while not self.tree.worker_gone() and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        if not self.tree.worker_gone():  # the hold ended: the request goes on as usual
            self._record("hang-ended", arm)
            return await self.inner.handle_async_request(request)
        while not self.tree.gone():
            await asyncio.sleep(0.05)
        raise httpx.RemoteProtocolError("server disconnected", request=request)

    def _record(self, event: str, arm: Arm) -> None:
        pid = self.launches.fired_pid or self.tree.worker
        line = {"schema_version": 1, "event": event, "pid": pid,
                "at_unix": time.time(), "where": "fake-tree:worker", "arm_id": arm.arm_id,
                "case_id": arm.case_id, "stage": arm.stage, "mode": arm.mode, "step": arm.step,
                "pid_ns": self.launches.pid_ns or own_pid_namespace()}  # fmt: skip
        with Path(self.launches.channel.record).open("a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")


def _targets(arm: Arm, request: httpx.Request) -> bool:
    seed = getattr(arm, "request_seed", None)
    if seed is None:
        return True
    try:
        body = json.loads(request.content or b"{}")
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("seed") == seed


def run_tree(launches: TreeLaunches, cases: tuple[str, ...], *,
             policy: RestartPolicy = RestartPolicy.EXITS,
             **params: Any) -> CheckOutcome:  # fmt: skip
    """The gate on ``launches`` (an images-generations row whose recipe the engine launches)."""
    settings: dict[str, Any] = dict(
        peers=1, peer_delay_s=0.02, request_timeout_s=5, error_deadline_s=3,
        health_timeout_s=0.5, recover_deadline_s=2, exit_deadline_s=1.5, settle_max_s=0.5,
        hang_s=0.3, hang_client_timeout_s=5, kill_hold_s=1.5)  # fmt: skip
    ctx, _ = context("abort", "images-generations")
    recipe = LaunchRecipe(id="fake-tree", description="a fake launch with a real process tree",
                          kind=RecipeKind.COMMAND, command=("fake-serve",))  # fmt: skip
    ctx = replace(ctx, gate=GateSpec(id="fault-injection", kind="fault_injection", version=1),
                  restart_policy=policy, serve_point=launches.serve,
                  target=replace(ctx.target, recipe=recipe))  # fmt: skip
    check = FaultInjectionCheck()
    return asyncio.run(check.run(ctx, FaultInjectionParams(cases=cases, **{**settings, **params})))


def case_summary(outcome: CheckOutcome, case: str) -> dict[str, object]:
    summary = outcome.effective["fault_injection"]
    assert isinstance(summary, dict)
    found = summary[case]
    assert isinstance(found, dict)
    return found
