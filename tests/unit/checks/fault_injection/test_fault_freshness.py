"""What the gate finds in the injector's files before it starts: a fault left armed (an earlier
run stopped between its arming and its disarming) is disarmed before the known-good request is
calibrated, and a ``loaded`` record older than the server's start (a previous server's) is no
sign that this server carries the injector."""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from omniqual.checks.base import CheckOutcome
from omniqual.checks.fault_injection import FaultInjectionCheck, FaultInjectionParams
from omniqual.deploy.fault_control import FaultChannel
from omniqual.domain.fault_injection import FaultEvent, FaultMode, FaultRecord, FaultStage
from omniqual.domain.gate import GateSpec
from omniqual.domain.matrix import RestartPolicy
from omniqual.domain.outcomes import GateOutcome
from tests.fakes.check_context import context
from tests.fakes.fake_config import FakeConfig, FakeInjection
from tests.fakes.fake_omni import FakeOmni


def run(tmp_path: Path, channel: FaultChannel, server: FakeOmni,
        pid: int | None = None) -> CheckOutcome:  # fmt: skip
    (tmp_path / "server-tmp").mkdir(exist_ok=True)
    params = FaultInjectionParams(
        cases=("encode-raise", "decode-raise"), peers=1, peer_delay_s=0.02, request_timeout_s=5,
        error_deadline_s=3, health_timeout_s=0.5, recover_deadline_s=1.5, exit_deadline_s=0.5,
        settle_max_s=0.2, control_path=str(channel.control), record_path=str(channel.record),
        watch_dirs=(str(tmp_path / "server-tmp"),))  # fmt: skip
    ctx, _ = context("abort", "images-generations", fake=server, pid=pid)
    ctx = replace(ctx, gate=GateSpec(id="fault-injection", kind="fault_injection", version=1),
                  restart_policy=RestartPolicy.RECOVERS)  # fmt: skip
    return asyncio.run(FaultInjectionCheck().run(ctx, params))


def test_a_fault_left_armed_is_disarmed_before_calibration(tmp_path: Path) -> None:
    channel = FaultChannel.in_dir(tmp_path / "channel")
    server = FakeOmni(FakeConfig(image_work_s=0.05, injector=FakeInjection(
        control=channel.control, record=channel.record)))  # fmt: skip
    server._injector()
    left = channel.arm("encode-raise", FaultStage.ENCODE, FaultMode.RAISE)  # an earlier run's
    outcome = run(tmp_path, channel, server)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert not [r for r in channel.records() if r.arm_id == left.arm_id]  # it never fired
    assert server.state.faults_fired == 2


@pytest.fixture
def server_process() -> Iterator[subprocess.Popen[bytes]]:
    """A process standing for the server (started now): its start dates the records."""
    process = subprocess.Popen(["sleep", "60"])
    try:
        yield process
    finally:
        process.kill()
        process.wait()


def _loaded(channel: FaultChannel, at_unix: float) -> None:
    line = FaultRecord(event=FaultEvent.LOADED, pid=4242, at_unix=at_unix, where="vllm serve")
    with channel.record.open("a", encoding="utf-8") as out:
        out.write(line.model_dump_json() + "\n")


def test_a_loaded_record_older_than_the_server_is_no_injector(
        tmp_path: Path, server_process: subprocess.Popen[bytes]) -> None:  # fmt: skip
    channel = FaultChannel.in_dir(tmp_path / "channel")
    _loaded(channel, time.time() - 3600)  # a previous server's, an hour ago
    server = FakeOmni(FakeConfig(image_work_s=0.05))  # this one carries no injector
    outcome = run(tmp_path, channel, server, pid=server_process.pid)
    assert outcome.outcome is GateOutcome.INVALID
    assert len(outcome.reasons) == 1 and outcome.reasons[0].startswith("no injector"), (
        outcome.reasons)  # fmt: skip
    assert "older than the server's start" in outcome.reasons[0]
    assert outcome.cases == ()


def test_a_loaded_record_since_the_server_started_is_the_injector(
        tmp_path: Path, server_process: subprocess.Popen[bytes]) -> None:  # fmt: skip
    channel = FaultChannel.in_dir(tmp_path / "channel")
    _loaded(channel, time.time() - 3600)
    server = FakeOmni(FakeConfig(image_work_s=0.05, injector=FakeInjection(
        control=channel.control, record=channel.record)))  # fmt: skip
    server._injector()  # loads now, after the server process started
    outcome = run(tmp_path, channel, server, pid=server_process.pid)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
