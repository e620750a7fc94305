"""The harness side, over the real agent service behind an httpx MockTransport (no sockets):
the client's answers and errors, and the observer reader that turns readings into samples."""

import asyncio
import os
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psutil
import pytest

from omniqual.checks.abort.work import WorkMeter
from omniqual.checks.base import TargetInfo
from omniqual.checks.observed import observed
from omniqual.checks.soak.watch import ResourceWatch
from omniqual.client import OmniClient
from omniqual.deploy.agent.client import AgentAccess, AgentClient, AgentError
from omniqual.deploy.agent.remote import AgentTree
from omniqual.deploy.agent.service import AgentConfig, AgentService
from omniqual.domain.agent import AGENT_SOURCE
from omniqual.domain.fault_injection import FaultArm, FaultMode, FaultStage

TOKEN = "t0ken-t0ken-t0ken-t0ken"
URL = "http://agent.invalid:7000"


def transport_of(service: AgentService) -> httpx.MockTransport:
    def handle(request: httpx.Request) -> httpx.Response:
        answer = service.handle(request.method, str(request.url.raw_path, "ascii"),
                                request.headers.get("Authorization"), request.content)
        return httpx.Response(answer.status, content=answer.body,
                              headers={"Content-Type": answer.content_type})
    return httpx.MockTransport(handle)


@pytest.fixture
def service(tmp_path: Path) -> AgentService:
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "left-over").write_text("x")
    return AgentService(AgentConfig(
        pid=os.getpid(), token=TOKEN, watch_dirs=(tmp_path / "w",),
        fault_control=tmp_path / "control.json", fault_record=tmp_path / "record.jsonl",
        gpu=False,
    ))  # fmt: skip


@pytest.fixture
def client(service: AgentService) -> Iterator[AgentClient]:
    with AgentClient(AgentAccess(URL, TOKEN), transport=transport_of(service)) as agent:
        yield agent


def test_the_client_reads_and_arms_through_the_agent(client: AgentClient, tmp_path: Path) -> None:
    assert client.readings().pid == os.getpid()
    assert client.identity().watch_dirs == (str(tmp_path / "w"),)
    assert client.cpu().cpu_s is not None
    fault = FaultArm(arm_id="x", case_id="c", stage=FaultStage.OUTPUT, mode=FaultMode.RAISE)
    assert client.arm(fault).armed == "x"
    assert (tmp_path / "control.json").read_text().strip() == fault.model_dump_json()
    assert client.disarm().armed is None
    assert client.records(0).records == ()


def test_a_wrong_token_is_an_error_that_does_not_repeat_it(service: AgentService) -> None:
    wrong = "wrong-wrong-wrong-wrong"
    agent = AgentClient(AgentAccess(URL, wrong), transport=transport_of(service))
    with agent, pytest.raises(AgentError) as caught:
        agent.readings()
    assert caught.value.status == 401
    assert wrong not in str(caught.value) and "Bearer token is required" in str(caught.value)
    assert wrong not in repr(AgentAccess(URL, wrong))


def test_an_agent_is_a_url() -> None:
    with pytest.raises(ValueError, match="http"):
        AgentAccess("agent.invalid:7000", TOKEN)


def test_the_reader_gives_observer_samples_on_the_harness_clock(client: AgentClient) -> None:
    tree = AgentTree(client, client.identity())
    assert tree.source == AGENT_SOURCE == "agent:process-tree"
    sample = tree.sample(started=0.0)
    assert sample.processes >= 1 and sample.rss_bytes > 10 * 2**20
    assert sample.elapsed_s > 0 and abs(sample.at - time.time()) < 60
    assert sample.dir_files == ((str(tree.watch_dirs[0]), 1),)
    cpu = tree.cpu_seconds()
    assert cpu is not None and cpu > 0
    assert tree.describe()["pid"] == os.getpid()


def test_a_gone_process_reads_as_absent_cpu(tmp_path: Path) -> None:
    gone = max(psutil.pids()) + 100_000
    service = AgentService(AgentConfig(pid=gone, token=TOKEN, gpu=False))
    with AgentClient(AgentAccess(URL, TOKEN), transport=transport_of(service)) as agent:
        tree = AgentTree(agent, agent.identity())
        assert tree.cpu_seconds() is None
        sample = tree.sample(started=0.0)
    assert sample.processes == 0 and sample.pss_bytes is None and tree.gone_seen


def test_an_unreachable_agent_gives_no_cpu_figure(service: AgentService) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    with AgentClient(AgentAccess(URL, TOKEN), transport=httpx.MockTransport(refuse)) as agent:
        tree = AgentTree(agent, service.identity())
        assert tree.cpu_seconds() is None
        with pytest.raises(AgentError, match="ConnectError"):
            tree.sample(started=0.0)


def test_a_gate_watch_over_an_agent_records_its_source(client: AgentClient) -> None:
    tree = AgentTree(client, client.identity())

    async def watch() -> tuple[str, list[int | None], list[str]]:
        side = OmniClient("http://127.0.0.1:9")  # never asked: the agent gives the readings
        async with ResourceWatch(side, tree=tree, interval_s=0.05) as resources:
            point = await resources.snapshot()
            meter = WorkMeter(side, tree, 0.05)
            meter.cpu = (await asyncio.to_thread(tree.cpu_seconds)) is not None
        return point.source, [p.temp_files for p in resources.points], meter.signals()

    source, files, signals = asyncio.run(watch())
    assert source == "agent:process-tree"
    assert files and set(files) == {1}
    assert signals == ["agent:process-tree CPU time"]


def test_observed_picks_the_agent_then_the_pid_then_nothing(
    client: AgentClient, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr("omniqual.checks.observed.connect",
                        lambda access: AgentTree(client, client.identity()))

    async def source_of(target: TargetInfo) -> tuple[str, tuple[Path, ...], bool]:
        async with observed(target, [str(tmp_path / "configured")]) as seen:
            return seen.source, seen.watch_dirs, bool(seen.details)

    agent = TargetInfo(url=URL, agent=AgentAccess(URL, TOKEN))
    assert asyncio.run(source_of(agent)) == (AGENT_SOURCE, (tmp_path / "w",), True)
    local = TargetInfo(url=URL, pid=os.getpid())
    assert asyncio.run(source_of(local)) == ("process-tree", (tmp_path / "configured",), False)
    assert asyncio.run(source_of(TargetInfo(url=URL))) == (
        "metrics", (tmp_path / "configured",), False)
