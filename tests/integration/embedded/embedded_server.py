"""A real `vllm serve --omni` process on the CPU platform, for the embedded integration tests.

Every server runs in its own process group on an ephemeral 127.0.0.1 port and is always killed
(SIGTERM, then SIGKILL) when the context exits.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

VLLM_BIN = Path(sys.executable).parent / "vllm"
READY_TIMEOUT_S = 240.0
NEEDS_EMBEDDED = pytest.mark.usefixtures("embedded_target")
"""Skips without the embedded target, fails in CI (tests/integration/conftest.py)."""
EMBEDDED_MARKS = [pytest.mark.integration, pytest.mark.embedded, pytest.mark.slow, NEEDS_EMBEDDED]
"""``pytestmark`` of every test module that needs the live embedded target."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass(frozen=True, slots=True)
class RunningServer:
    base_url: str
    ready_s: float
    log_path: Path
    process: subprocess.Popen[bytes]

    def log_tail(self, lines: int = 40) -> str:
        text = self.log_path.read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])


class ServerStartError(RuntimeError):
    """The server exited before becoming healthy; carries the tail of its log."""


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    except ProcessLookupError:
        pass


@contextmanager
def serve(checkpoint: Path, extra_args: Sequence[str], log_path: Path) -> Iterator[RunningServer]:
    """Start `vllm serve <checkpoint> --omni` on the CPU platform; always stop it."""
    port = free_port()
    env = {**os.environ, "OMNIQUAL_CPU_PLATFORM": "1", "HF_HUB_OFFLINE": "1"}
    command = [str(VLLM_BIN), "serve", str(checkpoint), "--omni", "--host", "127.0.0.1"]
    command += ["--port", str(port), *extra_args]
    started = time.monotonic()
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    try:
        base_url = f"http://127.0.0.1:{port}"
        while True:
            if process.poll() is not None:
                tail = log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-30:]
                raise ServerStartError("server exited during startup:\n" + "\n".join(tail))
            try:
                if httpx.get(f"{base_url}/health", timeout=2.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() - started > READY_TIMEOUT_S:
                raise ServerStartError(f"not healthy within {READY_TIMEOUT_S} s")
            time.sleep(0.5)
        yield RunningServer(base_url, time.monotonic() - started, log_path, process)
    finally:
        _stop(process)
