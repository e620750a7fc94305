"""A fake server that leaks file descriptors, seen through real descriptors (no sockets).

`FdLeakingFake` is the serial fake that, with ``leaks`` on, opens a file for every generation
request (a cut one included) and never closes it, as a server that opens a per-request log or a
weights file and loses the handle would. The file already exists and lies outside any watched
directory, so no temp file appears: the open descriptor is the only trace.

The fake runs inside the test process, so its descriptors are this process's. Both readings a
gate has see them for real, never a scripted number:

- ``/metrics`` reports ``process_open_fds`` as the count of ``/proc/self/fd`` (what
  prometheus_client's process collector reports for a real server), for a target given by URL;
- a gate given this process's pid (``os.getpid()``) reads the same descriptors through its
  process-tree reader (psutil's ``num_fds``).

``close()`` closes every descriptor it holds (call it when the test ends).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import httpx

from tests.fakes.fake_config import FakeConfig
from tests.fakes.fake_core import Outcome
from tests.fakes.fake_serial import SerialFakeOmni

GENERATIONS = frozenset({"/v1/images/generations", "/v1/images/edits", "/v1/chat/completions",
                         "/v1/audio/generate", "/v1/videos", "/v1/videos/sync"})  # fmt: skip
_OPEN_FDS = re.compile(r"^process_open_fds .*$", re.MULTILINE)


def open_fds() -> int:
    """This process's open descriptors, counted as a Prometheus process collector counts them."""
    return len(os.listdir("/proc/self/fd"))


class FdLeakingFake(SerialFakeOmni):
    def __init__(self, config: FakeConfig, held_file: Path, *, leaks: bool = True) -> None:
        super().__init__(config)
        held_file.parent.mkdir(parents=True, exist_ok=True)
        held_file.write_bytes(b"{}")
        self.held_file, self.leaks = held_file, leaks
        self.held: list[int] = []

    def plan(self, request: httpx.Request) -> Outcome:
        if self.leaks and request.method == "POST" and request.url.path in GENERATIONS:
            self.held.append(os.open(self.held_file, os.O_RDONLY))
        return super().plan(request)

    def metrics_text(self) -> str:
        return _OPEN_FDS.sub(f"process_open_fds {open_fds()}", super().metrics_text())

    def close(self) -> None:
        while self.held:
            os.close(self.held.pop())
