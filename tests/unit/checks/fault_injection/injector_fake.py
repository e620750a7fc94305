"""The fault-injection gate run against an in-process fake acting as a server launched with the
injector (its two files), for the peer-output and cancel-point tests."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

from omniqual.checks.base import CheckOutcome
from omniqual.checks.fault_injection import FaultInjectionCheck, FaultInjectionParams
from omniqual.deploy.fault_control import FaultChannel
from omniqual.domain.gate import GateSpec
from omniqual.domain.matrix import RestartPolicy
from tests.fakes.check_context import context
from tests.fakes.fake_config import FakeConfig, FakeFaults, FakeInjection
from tests.fakes.fake_omni import FakeOmni

POINTS = ("cancel-before-admission", "cancel-after-encode", "cancel-before-decode",
          "cancel-during-output")  # fmt: skip


def run_gate(tmp_path: Path, api_mode: str, cases: tuple[str, ...], *,
             server: type[FakeOmni] = FakeOmni, stages: tuple[str, ...] | None = None,
             config: dict[str, Any] | None = None, params: dict[str, Any] | None = None,
             **faults: Any) -> tuple[CheckOutcome, FakeOmni, FaultChannel]:  # fmt: skip
    channel = FaultChannel.in_dir(tmp_path / "channel")
    server_tmp = tmp_path / "server-tmp"  # its temp files are counted: no figure is no pass
    server_tmp.mkdir()
    injection = FakeInjection(control=channel.control, record=channel.record, stages=stages)
    settings: dict[str, Any] = {"image_work_s": 0.05, "video_queue_s": 0.02,
                                "video_run_s": 0.2, "hang_s": 3.0, **(config or {})}  # fmt: skip
    fake = server(FakeConfig(**settings, faults=FakeFaults(**faults), injector=injection))
    fake._injector()  # the injector loads with the server, before any request
    given: dict[str, Any] = {
        "cases": cases, "peers": 2, "peer_delay_s": 0.02, "request_timeout_s": 5,
        "error_deadline_s": 1.5, "health_timeout_s": 0.5, "recover_deadline_s": 1.5,
        "exit_deadline_s": 0.5, "settle_max_s": 0.3, "hang_s": 0.3, "hang_client_timeout_s": 5,
        "hold_s": 0.6, "queue_s": 0.1, "control_path": str(channel.control),
        "record_path": str(channel.record), "watch_dirs": (str(server_tmp),), **(params or {})}
    ctx, _ = context("abort", api_mode, fake=fake)
    gate = GateSpec(id="fault-injection", kind="fault_injection", version=2)
    ctx = replace(ctx, gate=gate, restart_policy=RestartPolicy.RECOVERS)
    outcome = asyncio.run(FaultInjectionCheck().run(ctx, FaultInjectionParams(**given)))
    return outcome, fake, channel


def summary_of(outcome: CheckOutcome, case: str) -> dict[str, object]:
    summary = outcome.effective["fault_injection"]
    assert isinstance(summary, dict)
    found = summary[case]
    assert isinstance(found, dict)
    return found
