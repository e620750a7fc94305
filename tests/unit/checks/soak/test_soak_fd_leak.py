"""The soak gate's FD growth check against a server that leaks descriptors (in-process, no
sockets): every generation request opens a file and never closes it. The descriptors are real
ones of this process (``tests/fakes/fake_fd_leak.py``), read by the gate as it reads a real
server: the ``process_open_fds`` gauge of ``/metrics`` for a target given by URL, the process
tree (psutil) for a target whose pid it knows. The same fake without the leak passes, so the
failure is the leak and nothing else."""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from omniqual.checks.base import CheckOutcome
from omniqual.checks.soak import SoakCheck
from omniqual.domain.outcomes import GateOutcome
from tests.fakes.check_context import context
from tests.fakes.fake_config import FakeConfig
from tests.fakes.fake_fd_leak import FdLeakingFake
from tests.unit.checks.soak.test_soak_faults import params

FD_GROWTH = re.compile(r"^soak: open file descriptors grew by (\d+) \((\d+) -> (\d+)\), "
                       r"bound 8$")  # fmt: skip
# Absolute latency bounds, as the clean-fake soak test uses: this machine's load must not decide
# a test about descriptors.
PHASES: list[dict[str, Any]] = [
    *({"name": n, "factor": f, "requests": 40, "slo_bound_s": 2.0}
      for n, f in (("below", 0.5), ("near", 0.9))),
    {"name": "above", "factor": 1.2, "requests": 30, "claimed_percentiles": [50],
     "slo_percentile": None},
]  # fmt: skip


@pytest.fixture
def fakes() -> Iterator[list[FdLeakingFake]]:
    made: list[FdLeakingFake] = []
    yield made
    for fake in made:
        fake.close()


def _run(tmp_path: Path, made: list[FdLeakingFake], *, leaks: bool,
         pid: int | None = None) -> tuple[CheckOutcome, FdLeakingFake, str]:  # fmt: skip
    watched = tmp_path / "server-tmp"
    watched.mkdir(exist_ok=True)
    server = FdLeakingFake(FakeConfig(image_work_s=0.01, video_queue_s=0.01, video_run_s=0.2,
                                      temp_dir=watched, hang_s=5),
                           tmp_path / "weights" / "config.json", leaks=leaks)  # fmt: skip
    made.append(server)
    soak = params(watched, phases=PHASES)
    ctx, harness = context("soak", "images-generations", fake=server, pid=pid)
    outcome = asyncio.run(SoakCheck().run(ctx, soak))
    source = json.loads(harness.sink.blobs["soak-summary.json"])["resource_source"]
    return outcome, server, source


def _fd_growth(outcome: CheckOutcome) -> list[tuple[int, int, int]]:
    return [(int(m[1]), int(m[2]), int(m[3])) for r in outcome.reasons
            if (m := FD_GROWTH.match(r))]  # fmt: skip


def test_fd_leak_fails_the_soak_read_from_metrics(
    tmp_path: Path, fakes: list[FdLeakingFake]
) -> None:
    outcome, server, source = _run(tmp_path, fakes, leaks=True)
    assert source == "metrics"
    assert outcome.outcome is GateOutcome.FAILED
    [(grew, before, after)] = _fd_growth(outcome)
    # The leak is the only finding: latency, errors, memory and temp files stay clean.
    assert list(outcome.reasons) == [r for r in outcome.reasons if FD_GROWTH.match(r)]
    # Every phase request leaked one (110 of them, injected cuts included), beyond the bound.
    assert 100 <= grew <= len(server.held) and after - before == grew
    growth = {m.name: m for m in outcome.measurements}["open_fd_growth"]
    assert growth.value == grew and growth.ok is False


def test_same_fake_without_the_leak_passes(tmp_path: Path, fakes: list[FdLeakingFake]) -> None:
    outcome, server, _ = _run(tmp_path, fakes, leaks=False)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert not server.held
    assert {m.name: m for m in outcome.measurements}["open_fd_growth"].ok is True


def test_fd_leak_fails_the_soak_read_from_the_process_tree(
    tmp_path: Path, fakes: list[FdLeakingFake]
) -> None:
    # The fake lives in this process: its pid makes the gate read the real descriptors through
    # its process-tree reader (psutil), as it reads a server it launched.
    outcome, server, source = _run(tmp_path, fakes, leaks=True, pid=os.getpid())
    assert source == "process-tree"
    assert outcome.outcome is GateOutcome.FAILED
    [(grew, _, _)] = _fd_growth(outcome)
    assert 100 <= grew <= len(server.held)
