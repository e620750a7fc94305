"""``gate run --target URL --agent AGENT``: a URL deployment on another host reaches the gate
with its agent, and the run's fingerprint names the agent's host (scripted checks, no sockets)."""

import asyncio
import os
from pathlib import Path

import pytest

from omniqual.deploy.agent.client import AgentAccess
from omniqual.domain.provenance import UNKNOWN
from omniqual.engine.single_gate import run_single_gate
from omniqual.engine.targets.served_identity import ServedIdentity
from omniqual.evidence.store import read_run
from tests.fakes import checks
from tests.fakes.projects import make_project

URL = "http://127.0.0.1:9"
AGENT = AgentAccess("http://10.0.0.7:7100", "t0ken-t0ken-t0ken-t0ken")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = make_project(tmp_path, monkeypatch)
    monkeypatch.chdir(root)

    async def identify(url: str) -> ServedIdentity:
        return ServedIdentity(url, ("m",), (), {}, "0.30.0", UNKNOWN, UNKNOWN)

    async def hosts(agents: dict[str, AgentAccess]) -> dict[str, str]:
        assert list(agents.values()) == [AGENT]
        return {name: "agent:gpu-host-3" for name in agents}

    monkeypatch.setattr("omniqual.engine.targets.served_identity.identify_deployment", identify)
    monkeypatch.setattr("omniqual.engine.single_gate.agent_hosts", hosts)
    checks.TARGET_PIDS.clear()
    checks.TARGET_AGENTS.clear()
    return root


def _run(target: str, *, agent: AgentAccess | None, pid: int | None = None) -> None:
    asyncio.run(
        run_single_gate("good", target, "task=t2i", matrix=Path("matrices/m.yaml"),
                        evidence_root=Path("runs"), command=["t"], server_pid=pid, agent=agent)
    )  # fmt: skip


def test_the_agent_reaches_the_gate_and_names_the_host(project: Path) -> None:
    _run(URL, agent=AGENT)
    assert [AGENT.url] == checks.TARGET_AGENTS
    assert checks.TARGET_PIDS == [None]  # no local process: the agent reads the tree
    (run_dir,) = (project / "runs").iterdir()
    assert read_run(run_dir).starts[0].environment.target_hosts == {URL: "agent:gpu-host-3"}


def test_an_agent_is_for_a_url_target_only(project: Path) -> None:
    with pytest.raises(ValueError, match="deployment given by URL"):
        _run("live", agent=AGENT)
    assert checks.TARGET_AGENTS == []


def test_an_agent_and_a_server_pid_are_one_too_many(project: Path) -> None:
    with pytest.raises(ValueError, match="give one"):
        _run(URL, agent=AGENT, pid=os.getpid())
    assert checks.TARGET_AGENTS == []
