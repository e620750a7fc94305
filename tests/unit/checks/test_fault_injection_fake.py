"""The fault-injection gate against the in-process fake acting as a server that carries the
injector: passes when clean, and each single misbehaviour after a fault (an error answered as
success, a hang, peers taken down, a state leak) makes it fail with a reason naming it; a
server without the injector is invalid."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

from omniqual.checks.base import CheckOutcome
from omniqual.checks.fault_injection import FaultInjectionCheck, FaultInjectionParams
from omniqual.deploy.fault_control import FaultChannel
from omniqual.domain.fault_injection import FaultEvent
from omniqual.domain.gate import GateSpec
from omniqual.domain.matrix import RestartPolicy
from omniqual.domain.outcomes import GateOutcome
from tests.fakes.check_context import context
from tests.fakes.fake_config import FakeConfig, FakeFaults, FakeInjection
from tests.fakes.fake_omni import FakeOmni

CASES = ("encode-raise", "denoise-late-raise", "decode-raise")


def run(tmp_path: Path, *, cases: tuple[str, ...] = CASES, injector: bool = True,
        **faults: Any) -> tuple[CheckOutcome, FakeOmni, FaultChannel]:  # fmt: skip
    channel = FaultChannel.in_dir(tmp_path / "channel")
    server_tmp = tmp_path / "server-tmp"  # its temp files are counted: no figure is no pass
    server_tmp.mkdir()
    injection = FakeInjection(control=channel.control, record=channel.record)
    server = FakeOmni(FakeConfig(image_work_s=0.05, hang_s=3.0, faults=FakeFaults(**faults),
                                 injector=injection if injector else None))  # fmt: skip
    if injector:
        server._injector()  # the injector loads with the server, before any request
    params = FaultInjectionParams(
        cases=cases, peers=2, peer_delay_s=0.02, request_timeout_s=5, error_deadline_s=3,
        health_timeout_s=0.5, recover_deadline_s=1.5, exit_deadline_s=0.5, settle_max_s=0.2,
        hang_s=0.3, hang_client_timeout_s=5, control_path=str(channel.control),
        record_path=str(channel.record), watch_dirs=(str(server_tmp),))  # fmt: skip
    ctx, _ = context("abort", "images-generations", fake=server)
    gate = GateSpec(id="fault-injection", kind="fault_injection", version=1)
    ctx = replace(ctx, gate=gate, restart_policy=RestartPolicy.RECOVERS)
    return asyncio.run(FaultInjectionCheck().run(ctx, params)), server, channel


def _failed(outcome: CheckOutcome) -> set[str]:
    return {c.id for c in outcome.cases if c.outcome is GateOutcome.FAILED}


def test_a_clean_server_passes_and_the_record_is_evidence(tmp_path: Path) -> None:
    outcome, server, channel = run(tmp_path)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert [c.id for c in outcome.cases] == list(CASES)
    assert not _failed(outcome)
    assert server.state.faults_fired == len(CASES)
    fired = [r for r in channel.records() if r.event is FaultEvent.FIRED]
    assert [r.case_id for r in fired] == list(CASES)
    summary = outcome.effective["fault_injection"]
    assert isinstance(summary, dict) and set(summary) == set(CASES)
    first = summary["encode-raise"]
    assert isinstance(first, dict)
    assert first["recovered"] is True and first["same_output"] is True
    assert "HTTP 500 with error envelope" in str(first["client"])
    assert str(first["peers"]).startswith("peers 2/2 succeeded")
    assert {a.name for a in outcome.artifacts} >= {"fault-records.jsonl",
                                                   "fault-injection-summary.json"}


def test_an_error_answered_as_success_fails(tmp_path: Path) -> None:
    outcome, _, _ = run(tmp_path, fault_answered_ok=True)
    assert outcome.outcome is GateOutcome.FAILED
    assert _failed(outcome) == set(CASES)
    assert any("answered as a success" in r for r in outcome.reasons)


def test_a_server_that_hangs_after_the_fault_fails(tmp_path: Path) -> None:
    outcome, _, _ = run(tmp_path, cases=("encode-raise",), hangs_after_fault=True)
    assert outcome.outcome is GateOutcome.FAILED
    assert any("neither recovered" in r for r in outcome.reasons), outcome.reasons


def test_peers_taken_down_by_one_requests_fault_fail(tmp_path: Path) -> None:
    outcome, _, _ = run(tmp_path, cases=("decode-raise",), fault_fails_peers=True)
    assert outcome.outcome is GateOutcome.FAILED
    assert any("a peer failed" in r and "must not take its peers down" in r
               for r in outcome.reasons)  # fmt: skip


def test_a_state_leak_after_the_fault_fails(tmp_path: Path) -> None:
    outcome, _, _ = run(tmp_path, cases=("encode-raise",), leaks_state_after_fault=True)
    assert outcome.outcome is GateOutcome.FAILED
    assert any("state leaked" in r for r in outcome.reasons)


def test_a_server_without_the_injector_is_invalid(tmp_path: Path) -> None:
    outcome, server, _ = run(tmp_path, injector=False)
    assert outcome.outcome is GateOutcome.INVALID
    assert outcome.reasons and outcome.reasons[0].startswith("no injector")
    assert server.state.faults_fired == 0
