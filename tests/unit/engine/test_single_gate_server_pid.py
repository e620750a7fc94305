"""``gate run --target URL --server-pid PID``: a URL deployment on this host can be watched like a
launched one (scripted checks, no sockets)."""

import asyncio
import os
from pathlib import Path

import psutil
import pytest

from omniqual.domain.provenance import UNKNOWN
from omniqual.engine.single_gate import run_single_gate
from omniqual.engine.targets.served_identity import ServedIdentity
from omniqual.evidence.store import read_run
from tests.fakes import checks
from tests.fakes.projects import make_project

URL = "http://127.0.0.1:9"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = make_project(tmp_path, monkeypatch)
    monkeypatch.chdir(root)

    async def identify(url: str) -> ServedIdentity:
        return ServedIdentity(url, ("m",), (), {}, "0.30.0", UNKNOWN, UNKNOWN)

    monkeypatch.setattr("omniqual.engine.targets.served_identity.identify_deployment", identify)
    checks.TARGET_PIDS.clear()
    return root


def _run(target: str, pid: int | None) -> None:
    asyncio.run(
        run_single_gate("good", target, "task=t2i", matrix=Path("matrices/m.yaml"),
                        evidence_root=Path("runs"), command=["t"], server_pid=pid)
    )  # fmt: skip


def test_the_named_process_reaches_the_gate_and_the_host_is_this_one(project: Path) -> None:
    _run(URL, os.getpid())
    assert [os.getpid()] == checks.TARGET_PIDS
    (run_dir,) = (project / "runs").iterdir()
    assert read_run(run_dir).starts[0].environment.target_hosts == {URL: "harness-host"}


def test_without_it_a_url_gate_knows_no_process(project: Path) -> None:
    _run(URL, None)
    assert checks.TARGET_PIDS == [None]


def test_a_process_that_does_not_exist_is_a_usage_error(project: Path) -> None:
    gone = max(psutil.pids()) + 100_000
    with pytest.raises(ValueError, match="no such process on this host"):
        _run(URL, gone)
    assert checks.TARGET_PIDS == []


def test_a_launched_recipe_needs_no_pid(project: Path) -> None:
    with pytest.raises(ValueError, match="deployment given by URL"):
        _run("live", os.getpid())
