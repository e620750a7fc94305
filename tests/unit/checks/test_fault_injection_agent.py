"""The fault-injection gate's injector channel: the agent's, over the real agent service behind an
httpx MockTransport (no sockets), arming, reading records and refusing when it has no injector
files; the files' channel; which channel a target gets; and a whole gate run through the agent."""

from __future__ import annotations

import asyncio
import os
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from omniqual.checks.base import CheckOutcome, TargetInfo
from omniqual.checks.fault_injection import FaultInjectionCheck, FaultInjectionParams
from omniqual.checks.fault_injection.control import (
    AGENT_WITHOUT_CONTROL,
    AgentControl,
    ControlError,
    FileControl,
    control_for,
    new_arm,
)
from omniqual.deploy.agent.client import AgentAccess, AgentClient
from omniqual.deploy.agent.remote import AgentTree
from omniqual.deploy.agent.service import AgentConfig, AgentService
from omniqual.deploy.fault_control import FaultChannel
from omniqual.domain.agent import AGENT_SOURCE
from omniqual.domain.fault_injection import FaultEvent, FaultMode, FaultRecord, FaultStage
from omniqual.domain.gate import GateSpec
from omniqual.domain.matrix import RestartPolicy
from omniqual.domain.outcomes import GateOutcome
from tests.fakes.check_context import context
from tests.fakes.fake_config import FakeConfig, FakeInjection
from tests.fakes.fake_omni import FakeOmni
from tests.unit.deploy.agent.test_agent_remote import TOKEN, URL, transport_of

ACCESS = AgentAccess(URL, TOKEN)


def service_of(channel: FaultChannel | None, watch_dirs: tuple[Path, ...] = ()) -> AgentService:
    return AgentService(AgentConfig(
        pid=os.getpid(), token=TOKEN, gpu=False, watch_dirs=watch_dirs,
        fault_control=None if channel is None else channel.control,
        fault_record=None if channel is None else channel.record))  # fmt: skip


def record(event: FaultEvent, arm_id: str = "") -> str:
    return FaultRecord(event=event, pid=os.getpid(), at_unix=1.0, arm_id=arm_id,
                       case_id="c").model_dump_json() + "\n"  # fmt: skip


def test_the_agent_channel_arms_disarms_and_reads_records(tmp_path: Path) -> None:
    channel = FaultChannel.in_dir(tmp_path)
    control = AgentControl(AgentClient(ACCESS, transport=transport_of(service_of(channel))))
    fault = new_arm("encode-raise", FaultStage.ENCODE, FaultMode.RAISE)

    async def use() -> tuple[str, list[FaultRecord], list[FaultRecord], str]:
        await control.arm(fault)
        armed = channel.control.read_text()
        channel.record.write_text(record(FaultEvent.LOADED) + record(FaultEvent.FIRED, fault.arm_id)
                                  + '{"torn')  # fmt: skip
        everything, tail = await control.records(), await control.records(1)
        await control.disarm()
        return armed, everything, tail, channel.control.read_text()

    armed, everything, tail, disarmed = asyncio.run(use())
    control.close()
    assert armed.strip() == fault.model_dump_json()
    assert [r.event for r in everything] == [FaultEvent.LOADED, FaultEvent.FIRED]
    assert [r.arm_id for r in tail] == [fault.arm_id]
    assert disarmed == "" and not control.local


def test_an_agent_without_fault_files_has_no_injector_control() -> None:
    control = AgentControl(AgentClient(ACCESS, transport=transport_of(service_of(None))))
    fault = new_arm("encode-raise", FaultStage.ENCODE, FaultMode.RAISE)
    with pytest.raises(ControlError) as caught:
        asyncio.run(control.arm(fault))
    assert str(caught.value) == AGENT_WITHOUT_CONTROL
    with pytest.raises(ControlError, match="--fault-control and --fault-record"):
        asyncio.run(control.records())


def test_an_unreachable_agent_is_a_control_error() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    control = AgentControl(AgentClient(ACCESS, transport=httpx.MockTransport(refuse)))
    with pytest.raises(ControlError, match=r"could not be asked.*ConnectError"):
        asyncio.run(control.disarm())


def test_the_file_channel_is_the_files(tmp_path: Path) -> None:
    channel = FaultChannel.in_dir(tmp_path)
    control = FileControl(channel)
    fault = new_arm("decode-raise", FaultStage.DECODE, FaultMode.RAISE)
    asyncio.run(control.arm(fault))
    assert channel.control.read_text() == fault.model_dump_json() and control.local
    channel.record.write_text(record(FaultEvent.LOADED) + record(FaultEvent.FIRED, "a"))
    assert [r.arm_id for r in asyncio.run(control.records(1))] == ["a"]
    asyncio.run(control.disarm())
    assert channel.control.read_text() == ""


def test_the_channel_is_the_agent_then_a_launch_then_the_named_files(tmp_path: Path) -> None:
    none = FaultInjectionParams()
    named = FaultInjectionParams(control_path=str(tmp_path / "c"), record_path=str(tmp_path / "r"))
    agent = control_for(TargetInfo(url=URL, agent=ACCESS), URL, named, tmp_path)
    assert isinstance(agent, AgentControl) and agent.client.access == ACCESS
    agent.close()
    launched = control_for(TargetInfo(url=None), None, none, tmp_path)
    assert isinstance(launched, FileControl)
    assert launched.channel.control == tmp_path / "channel" / "fault-control.json"
    given = control_for(TargetInfo(url=URL), URL, named, tmp_path)
    assert isinstance(given, FileControl)
    assert (given.channel.control, given.channel.record) == (tmp_path / "c", tmp_path / "r")
    missing = control_for(TargetInfo(url=URL), URL, none, tmp_path)
    assert isinstance(missing, str) and missing.startswith("no injector")


def run_through_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *,
                      with_files: bool) -> CheckOutcome:  # fmt: skip
    channel = FaultChannel.in_dir(tmp_path / "server-host")
    server = FakeOmni(FakeConfig(image_work_s=0.05, injector=FakeInjection(
        control=channel.control, record=channel.record)))  # fmt: skip
    server._injector()
    watched = (tmp_path / "server-tmp",)  # the agent counts the server's temp files
    watched[0].mkdir()
    transport = transport_of(service_of(channel if with_files else None, watched))
    monkeypatch.setattr("omniqual.checks.fault_injection.control.AgentClient",
                        lambda access: AgentClient(access, transport=transport))
    monkeypatch.setattr("omniqual.checks.observed.connect", lambda access: AgentTree(
        AgentClient(access, transport=transport), service_of(None, watched).identity()))
    params = FaultInjectionParams(
        cases=("encode-raise",), peers=1, peer_delay_s=0.02, request_timeout_s=5,
        error_deadline_s=3, health_timeout_s=0.5, recover_deadline_s=1.5, exit_deadline_s=0.5,
        settle_max_s=0.2, max_memory_growth_mib=4096, max_fd_growth=64)  # fmt: skip
    ctx, _ = context("abort", "images-generations", fake=server)
    ctx = replace(ctx, gate=GateSpec(id="fault-injection", kind="fault_injection", version=1),
                  restart_policy=RestartPolicy.RECOVERS,
                  target=replace(ctx.target, agent=ACCESS))  # fmt: skip
    return asyncio.run(FaultInjectionCheck().run(ctx, params))


def test_a_gate_run_arms_and_reads_through_the_agent(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    outcome = run_through_agent(tmp_path, monkeypatch, with_files=True)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    summary = outcome.effective["fault_injection"]
    assert isinstance(summary, dict)
    case = summary["encode-raise"]
    assert isinstance(case, dict) and case["recovered"] is True and case["fired_pids"]
    readings = outcome.effective["readings"]
    assert isinstance(readings, dict) and readings["source"] == AGENT_SOURCE
    assert readings["agent"] == URL


def test_a_gate_through_an_agent_without_fault_files_is_invalid(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    outcome = run_through_agent(tmp_path, monkeypatch, with_files=False)
    assert outcome.outcome is GateOutcome.INVALID
    assert outcome.reasons == (AGENT_WITHOUT_CONTROL,)
