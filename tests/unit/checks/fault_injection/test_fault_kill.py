"""``worker-sigkill`` when the harness cannot deliver the kill: the case is invalid with the
reason, never judged as if the worker had been killed (the held request then completes, which
would read as an error answered as success). A pid is signalled only when it is this harness's
to signal: in our pid namespace (the injector records its own) and in the served tree; a kill
refused by the kernel (EPERM) or aimed at a process already gone (ESRCH), and a server on
another host (an agent has no kill), are each invalid."""

from __future__ import annotations

import asyncio
import errno
import os
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from omniqual.checks.base import CheckOutcome
from omniqual.checks.fault_injection import FaultInjectionCheck, FaultInjectionParams
from omniqual.deploy.agent.client import AgentClient
from omniqual.deploy.agent.remote import AgentTree
from omniqual.deploy.fault_control import FaultChannel
from omniqual.domain.gate import GateSpec
from omniqual.domain.matrix import RestartPolicy
from omniqual.domain.outcomes import GateOutcome
from tests.fakes.check_context import context
from tests.fakes.fake_config import FakeConfig, FakeInjection
from tests.fakes.fake_omni import FakeOmni
from tests.unit.checks.fault_injection.tree_fake import TreeLaunches, case_summary, run_tree
from tests.unit.checks.test_fault_injection_agent import ACCESS, service_of
from tests.unit.deploy.agent.test_agent_remote import transport_of

REAL_KILL = os.kill


def _refusing(launches: TreeLaunches, error: OSError) -> object:
    """os.kill that fails with ``error`` for a SIGKILL of a fake tree's worker."""

    def kill(pid: int, sig: int) -> None:
        if sig == signal.SIGKILL and pid in {t.worker for t in launches.trees}:
            raise error
        REAL_KILL(pid, sig)

    return kill


def _invalid_without_judging(outcome: CheckOutcome, why: str) -> None:
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert [c.outcome for c in outcome.cases] == [GateOutcome.INVALID]
    assert len(outcome.reasons) == 1 and outcome.reasons[0].startswith("worker-sigkill:")
    assert why in outcome.reasons[0], outcome.reasons
    assert "answered as a success" not in outcome.reasons[0]


@pytest.mark.parametrize(("error", "why"), [
    (PermissionError(errno.EPERM, "Operation not permitted"), "not permitted"),
    (ProcessLookupError(errno.ESRCH, "No such process"), "gone before the SIGKILL"),
])  # fmt: skip
def test_a_kill_the_kernel_refuses_is_invalid(monkeypatch: pytest.MonkeyPatch, error: OSError,
                                              why: str) -> None:  # fmt: skip
    launches = TreeLaunches()
    monkeypatch.setattr(os, "kill", _refusing(launches, error))
    outcome = run_tree(launches, ("worker-sigkill",))
    _invalid_without_judging(outcome, why)
    assert case_summary(outcome, "worker-sigkill")["exited"] is False


def test_a_pid_recorded_in_another_pid_namespace_is_never_signalled() -> None:
    launches = TreeLaunches(pid_ns="pid:[4026539999]")
    outcome = run_tree(launches, ("worker-sigkill",))
    _invalid_without_judging(outcome, "another pid namespace")
    assert case_summary(outcome, "worker-sigkill")["exited"] is False  # the worker lived on


@pytest.fixture
def stranger() -> Iterator[subprocess.Popen[bytes]]:
    """A process of ours that is no part of any served tree."""
    process = subprocess.Popen(["sleep", "60"])
    try:
        yield process
    finally:
        process.kill()
        process.wait()


def test_a_pid_outside_the_served_tree_is_never_signalled(
        stranger: subprocess.Popen[bytes]) -> None:  # fmt: skip
    launches = TreeLaunches(fired_pid=stranger.pid)
    outcome = run_tree(launches, ("worker-sigkill",))
    _invalid_without_judging(outcome, "not in the server's process tree")
    assert stranger.poll() is None  # never signalled


def test_a_server_on_another_host_cannot_be_killed_through_its_agent(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    channel = FaultChannel.in_dir(tmp_path / "server-host")
    server = FakeOmni(FakeConfig(image_work_s=0.05, injector=FakeInjection(
        control=channel.control, record=channel.record)))  # fmt: skip
    server._injector()
    transport = transport_of(service_of(channel))
    monkeypatch.setattr("omniqual.checks.fault_injection.control.AgentClient",
                        lambda access: AgentClient(access, transport=transport))
    monkeypatch.setattr("omniqual.checks.observed.connect", lambda access: AgentTree(
        AgentClient(access, transport=transport), service_of(None).identity()))
    params = FaultInjectionParams(
        cases=("worker-sigkill",), peers=1, peer_delay_s=0.02, request_timeout_s=5,
        error_deadline_s=3, health_timeout_s=0.5, recover_deadline_s=1.5, exit_deadline_s=0.5,
        settle_max_s=0.2, kill_hold_s=0.5, max_memory_growth_mib=4096,
        max_fd_growth=64)  # fmt: skip
    ctx, _ = context("abort", "images-generations", fake=server)
    ctx = replace(ctx, gate=GateSpec(id="fault-injection", kind="fault_injection", version=1),
                  restart_policy=RestartPolicy.RECOVERS,
                  target=replace(ctx.target, agent=ACCESS))  # fmt: skip
    outcome = asyncio.run(FaultInjectionCheck().run(ctx, params))
    _invalid_without_judging(outcome, "another host")
    assert server.state.faults_fired == 0  # nothing was armed for a kill that cannot be sent
