"""Resources after faults are judged against the baseline taken before the server's first case,
summed over its cases (a server that keeps a little of every fault grows past the bound though
no single case does), and a figure that could not be read is absent (invalid), never zero."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx

from omniqual.checks.base import CheckOutcome
from omniqual.checks.fault_injection import FaultInjectionCheck, FaultInjectionParams
from omniqual.client import ClientTimeouts, OmniClient
from omniqual.deploy.fault_control import FaultChannel
from omniqual.deploy.fault_injector.core import ControlReader
from omniqual.domain.gate import GateSpec
from omniqual.domain.matrix import RestartPolicy
from omniqual.domain.outcomes import GateOutcome
from tests.fakes.check_context import context
from tests.fakes.fake_config import FakeConfig, FakeInjection
from tests.fakes.fake_omni import FakeOmni

MIB = 1024 * 1024
CASES = ("encode-raise", "denoise-late-raise", "decode-raise")


class _Leaky(httpx.AsyncBaseTransport):
    """Keeps ``per_fault`` bytes of every faulted request; drops /metrics lines it is told to."""

    def __init__(self, server: FakeOmni, control: Path, per_fault: int, hide: str) -> None:
        self.server, self.inner = server, server.transport()
        self.per_fault, self.hide = per_fault, hide
        self.reader = ControlReader(control)
        self.seen: set[str] = set()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        arm = self.reader.current()
        if request.method == "POST" and arm is not None and arm.arm_id not in self.seen:
            self.seen.add(arm.arm_id)
            with self.server.lock:
                self.server.state.leaked_bytes += self.per_fault
        response = await self.inner.handle_async_request(request)
        if request.url.path != "/metrics" or not self.hide:
            return response
        text = (await response.aread()).decode()
        kept = "\n".join(line for line in text.splitlines() if self.hide not in line)
        return httpx.Response(200, text=kept)


def run(tmp_path: Path, *, per_fault: int = 0, hide: str = "", watch: bool = True,
        **params: Any) -> CheckOutcome:  # fmt: skip
    channel = FaultChannel.in_dir(tmp_path / "channel")
    server = FakeOmni(FakeConfig(image_work_s=0.05, injector=FakeInjection(
        control=channel.control, record=channel.record)))  # fmt: skip
    server._injector()
    transport = _Leaky(server, channel.control, per_fault, hide)
    (tmp_path / "server-tmp").mkdir()
    settings: dict[str, Any] = dict(
        cases=CASES, peers=1, peer_delay_s=0.02, request_timeout_s=5, error_deadline_s=3,
        health_timeout_s=0.5, recover_deadline_s=1.5, exit_deadline_s=0.5, settle_max_s=0.2,
        control_path=str(channel.control), record_path=str(channel.record),
        watch_dirs=(str(tmp_path / "server-tmp"),) if watch else ())  # fmt: skip
    ctx, _ = context("abort", "images-generations", fake=server)
    ctx = replace(ctx, gate=GateSpec(id="fault-injection", kind="fault_injection", version=1),
                  restart_policy=RestartPolicy.RECOVERS, make_client=lambda: OmniClient(
                      "http://fake.invalid", transport=transport, timeouts=ClientTimeouts()))
    check = FaultInjectionCheck()
    return asyncio.run(check.run(ctx, FaultInjectionParams(**{**settings, **params})))


def test_memory_kept_from_every_fault_fails_once_the_sum_passes_the_bound(tmp_path: Path) -> None:
    outcome = run(tmp_path, per_fault=40 * MIB, max_memory_growth_mib=64)
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    failed = [c.id for c in outcome.cases if c.outcome is GateOutcome.FAILED]
    assert failed == ["denoise-late-raise", "decode-raise"]
    summary = outcome.effective["fault_injection"]
    assert isinstance(summary, dict)
    assert [summary[c]["leak"]["memory_mib"] for c in CASES] == [40.0, 80.0, 120.0]
    assert any(r.startswith("denoise-late-raise:") and "memory_mib +80.0" in r
               for r in outcome.reasons), outcome.reasons  # fmt: skip


def test_a_clean_server_within_the_bounds_passes(tmp_path: Path) -> None:
    outcome = run(tmp_path, per_fault=1 * MIB, max_memory_growth_mib=64)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons


def test_an_unreadable_fd_figure_is_absent_never_zero(tmp_path: Path) -> None:
    outcome = run(tmp_path, hide="process_open_fds")
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert all(c.outcome is GateOutcome.INVALID for c in outcome.cases)
    assert all("no open-FD figure" in r for r in outcome.reasons), outcome.reasons


def test_a_server_without_a_watched_temp_directory_has_no_temp_figure(tmp_path: Path) -> None:
    outcome = run(tmp_path, watch=False)
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert all("no temp-file figure" in r and "watch_dirs" in r for r in outcome.reasons)
