"""The abort gate's FD cleanup check against a server that leaks descriptors (in-process, no
sockets): every generation request opens a file and never closes it, so after the cases the
server holds more descriptors than before and never gives them back. The fake's descriptors are
real ones of this process (``tests/fakes/fake_fd_leak.py``), read by the gate as it reads a real
server: the ``process_open_fds`` gauge of ``/metrics`` for a target given by URL, the process
tree (psutil) for a target whose pid it knows. The same fake without the leak passes, so the
failure is the leak and nothing else."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from omniqual.checks.abort import AbortCheck
from omniqual.checks.abort.params import AbortParams
from omniqual.checks.base import CheckOutcome
from omniqual.domain.abort_cleanup import AbortCleanup
from omniqual.domain.outcomes import GateOutcome
from tests.fakes.check_context import context
from tests.fakes.fake_config import FakeConfig
from tests.fakes.fake_fd_leak import FdLeakingFake
from tests.unit.checks.test_abort_faults import SIZED_FOR_THE_FAKE

FD_GROWTH = re.compile(r"^after the abort cases: open file descriptors grew by (\d+) "
                       r"\((\d+) -> (\d+)\), bound 8$")  # fmt: skip


@pytest.fixture
def fakes(tmp_path: Path) -> Iterator[list[FdLeakingFake]]:
    made: list[FdLeakingFake] = []
    yield made
    for fake in made:
        fake.close()


def _run(tmp_path: Path, made: list[FdLeakingFake], api_mode: str, *, leaks: bool,
         pid: int | None = None) -> tuple[CheckOutcome, FdLeakingFake]:  # fmt: skip
    watched = tmp_path / "server-tmp"
    watched.mkdir(exist_ok=True)
    server = FdLeakingFake(FakeConfig(image_work_s=0.15, video_queue_s=0.02, video_run_s=0.15,
                                      temp_dir=watched, hang_s=5),
                           tmp_path / "weights" / "config.json", leaks=leaks)  # fmt: skip
    made.append(server)
    params = AbortParams(min_service_s=0.12, watch_dirs=(str(watched),),
                         gauges_prove_stop=True, **SIZED_FOR_THE_FAKE)
    ctx, _ = context("abort", api_mode, fake=server, pid=pid)
    return asyncio.run(AbortCheck().run(ctx, params)), server


def _fd_growth(outcome: CheckOutcome) -> list[tuple[int, int, int]]:
    return [(int(m[1]), int(m[2]), int(m[3])) for r in outcome.reasons
            if (m := FD_GROWTH.match(r))]  # fmt: skip


@pytest.mark.parametrize("api_mode", ["images-generations", "videos-async"])
def test_fd_leak_fails_cleanup_read_from_metrics(
    tmp_path: Path, fakes: list[FdLeakingFake], api_mode: str
) -> None:
    outcome, server = _run(tmp_path, fakes, api_mode, leaks=True)
    assert outcome.outcome is GateOutcome.FAILED
    [(grew, before, after)] = _fd_growth(outcome)
    # The leak is the only finding: memory, temp files and every case stay clean.
    assert list(outcome.reasons) == [r for r in outcome.reasons if FD_GROWTH.match(r)]
    assert all(c.outcome is GateOutcome.PASSED for c in outcome.cases)
    assert grew > 8 and after - before == grew
    # What the gate read is what the fake holds: every request after the baseline leaked one.
    assert grew <= len(server.held)
    record = AbortCleanup.model_validate(outcome.effective["abort_cleanup"])
    assert record.resource_source == "metrics"
    assert (record.baseline.open_fds, record.after.open_fds) == (before, after)
    growth = {m.name: m for m in outcome.measurements}["open_fd_growth"]
    assert growth.value == grew and growth.ok is False


@pytest.mark.parametrize("api_mode", ["images-generations", "videos-async"])
def test_same_fake_without_the_leak_passes(
    tmp_path: Path, fakes: list[FdLeakingFake], api_mode: str
) -> None:
    outcome, server = _run(tmp_path, fakes, api_mode, leaks=False)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert not server.held
    growth = {m.name: m for m in outcome.measurements}["open_fd_growth"]
    assert growth.ok is True


def test_fd_leak_fails_cleanup_read_from_the_process_tree(
    tmp_path: Path, fakes: list[FdLeakingFake]
) -> None:
    # The fake lives in this process: its pid makes the gate read the real descriptors through
    # its process-tree reader (psutil), as it reads a server it launched.
    outcome, server = _run(tmp_path, fakes, "images-generations", leaks=True, pid=os.getpid())
    assert outcome.outcome is GateOutcome.FAILED
    [(grew, _, _)] = _fd_growth(outcome)
    assert 8 < grew <= len(server.held)
    record = AbortCleanup.model_validate(outcome.effective["abort_cleanup"])
    assert record.resource_source == "process-tree"
