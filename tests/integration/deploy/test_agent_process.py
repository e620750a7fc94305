"""A real ``omniqual agent`` process on an ephemeral port, watching a sleeping child: readings
over HTTP with the token, 401 without it, the fault control file armed and disarmed, record
lines read back, and "gone" once the child is killed."""

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from omniqual.deploy.agent.client import AgentAccess, AgentClient
from omniqual.deploy.agent.remote import connect
from omniqual.domain.fault_injection import FaultArm, FaultMode, FaultStage

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
CLI = "from omniqual.cli.main import main; main()"


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    yield child
    if child.poll() is None:
        child.kill()
    child.wait()


@pytest.fixture
def agent(sleeper: subprocess.Popen[bytes], tmp_path: Path) -> Iterator[tuple[str, Path, Path]]:
    (tmp_path / "watched").mkdir()
    (tmp_path / "watched" / "residue").write_text("x")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMNIQUAL_HOME": str(tmp_path / "home")}
    proc = subprocess.Popen(
        [sys.executable, "-c", CLI, "--log-level", "INFO", "agent", "--pid", str(sleeper.pid),
         "--port", "0", "--token-file", str(tmp_path / "agent.token"), "--no-gpu",
         "--watch-dir", str(tmp_path / "watched"),
         "--fault-control", str(tmp_path / "control.json"),
         "--fault-record", str(tmp_path / "record.jsonl")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode()
        assert line.startswith("listening on http://127.0.0.1:"), line
        yield line.split()[-1], tmp_path, tmp_path / "agent.token"
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        token = (tmp_path / "agent.token").read_text().strip()
        assert token not in err.decode()  # the log names the token's file, never the token
        assert str(tmp_path / "agent.token") in err.decode()
        assert proc.returncode == 0


def test_a_remote_tree_is_read_armed_and_seen_gone(
    agent: tuple[str, Path, Path], sleeper: subprocess.Popen[bytes]
) -> None:
    url, tmp, token_file = agent
    assert oct(token_file.stat().st_mode & 0o777) == "0o600"
    assert httpx.get(f"{url}/v1/readings", timeout=10).status_code == 401
    wrong = {"Authorization": "Bearer not-the-token-at-all"}
    assert httpx.get(f"{url}/v1/identity", headers=wrong, timeout=10).status_code == 401

    access = AgentAccess(url, token_file.read_text().strip())
    with AgentClient(access, timeout_s=10) as client:
        identity = client.identity()
        assert identity.pid == sleeper.pid and identity.state == "running"
        assert identity.processes == 1 and identity.fault_control
        readings = client.readings()
        assert readings.state == "running" and readings.processes == 1
        assert readings.rss_bytes > 1 * 2**20 and readings.open_fds is not None
        assert [(d.path, d.files) for d in readings.dir_files] == [(str(tmp / "watched"), 1)]

        fault = FaultArm(arm_id="arm-1", case_id="cut", stage=FaultStage.DENOISE,
                         mode=FaultMode.RAISE, step=1)  # fmt: skip
        assert client.arm(fault).armed == "arm-1"
        assert FaultArm.model_validate_json((tmp / "control.json").read_text()) == fault
        assert client.disarm().armed is None
        assert (tmp / "control.json").read_bytes() == b""

        records = [{"event": "loaded", "pid": sleeper.pid, "at_unix": 1.0},
                   {"event": "fired", "pid": sleeper.pid, "at_unix": 2.0, "arm_id": "arm-1",
                    "case_id": "cut", "stage": "denoise", "mode": "raise", "step": 1}]
        (tmp / "record.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
        page = client.records(after=0)
        assert [r.event.value for r in page.records] == ["loaded", "fired"] and page.next == 2
        assert [r.arm_id for r in client.records(after=1).records] == ["arm-1"]

        sleeper.kill()
        sleeper.wait()
        gone = client.readings()
        assert gone.state == "gone" and gone.processes == 0 and gone.cpu_s is None
        assert client.identity().state == "gone"

    tree = connect(access)  # the observer's reader of the same agent
    try:
        assert tree.source == "agent:process-tree"
        assert tree.cpu_seconds() is None and tree.sample(0.0).processes == 0
    finally:
        tree.close()
