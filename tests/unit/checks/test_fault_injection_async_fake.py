"""The fault-injection gate on an async video row (the job API) against the in-process fake
carrying the injector: passes when every faulted job ends `failed` with its error and nothing is
left unfinished; a leaked job (in progress forever, or still listed unfinished) and a faulted job
reported `completed` each make it fail with a reason naming it."""

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

CASES = ("encode-raise", "denoise-late-raise", "output-raise")


def run(tmp_path: Path, *, cases: tuple[str, ...] = CASES,
        **faults: Any) -> tuple[CheckOutcome, FakeOmni, FaultChannel]:  # fmt: skip
    channel = FaultChannel.in_dir(tmp_path / "channel")
    server_tmp = tmp_path / "server-tmp"  # its temp files are counted: no figure is no pass
    server_tmp.mkdir()
    server = FakeOmni(FakeConfig(
        video_queue_s=0.02, video_run_s=0.05, faults=FakeFaults(**faults),
        injector=FakeInjection(control=channel.control, record=channel.record)))  # fmt: skip
    server._injector()  # the injector loads with the server, before any request
    params = FaultInjectionParams(
        cases=cases, peers=2, peer_delay_s=0.02, request_timeout_s=5, error_deadline_s=1.5,
        health_timeout_s=0.5, recover_deadline_s=1.5, exit_deadline_s=0.5, settle_max_s=0.2,
        hang_s=0.8, hang_client_timeout_s=0.2, late_s=0.8, control_path=str(channel.control),
        record_path=str(channel.record), watch_dirs=(str(server_tmp),))  # fmt: skip
    ctx, _ = context("abort", "videos-async", fake=server)
    gate = GateSpec(id="fault-injection", kind="fault_injection", version=1)
    ctx = replace(ctx, gate=gate, restart_policy=RestartPolicy.RECOVERS)
    return asyncio.run(FaultInjectionCheck().run(ctx, params)), server, channel


def _summary(outcome: CheckOutcome, case: str) -> dict[str, object]:
    summary = outcome.effective["fault_injection"]
    assert isinstance(summary, dict)
    found = summary[case]
    assert isinstance(found, dict)
    return found


def test_a_clean_async_server_passes_through_the_job_api(tmp_path: Path) -> None:
    cases = (*CASES, "late-after-cancel", "denoise-hang")
    outcome, server, channel = run(tmp_path, cases=cases)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert [c.id for c in outcome.cases] == list(cases)
    assert {c.endpoint for c in outcome.cases} == {"video_async"}
    assert server.state.faults_fired == len(cases)
    fired = [r for r in channel.records() if r.event is FaultEvent.FIRED]
    assert [r.case_id for r in fired] == list(cases)
    first = _summary(outcome, "encode-raise")
    assert "failed" in str(first["client"]) and "omniqual injected fault" in str(first["client"])
    assert "content HTTP 422" in str(first["client"])
    assert str(first["peers"]).startswith("peer jobs 2/2 completed")
    assert "listing: 0 unfinished" in str(first["peers"])
    assert first["recovered"] is True and first["same_output"] is True
    for cancelled in ("late-after-cancel", "denoise-hang"):  # the client cancelled: gone
        client = str(_summary(outcome, cancelled)["client"])
        assert "DELETE HTTP 200" in client and "gone" in client, client
    with server.lock:
        assert not server.state.jobs  # every job the gate made was deleted once judged


def test_a_faulted_job_that_stays_in_progress_fails_as_leaked(tmp_path: Path) -> None:
    outcome, _, _ = run(tmp_path, cases=("encode-raise",), faulted_job_stuck=True)
    assert outcome.outcome is GateOutcome.FAILED
    assert any("stayed in_progress past the 1.5 s deadline" in r and "leaked" in r
               for r in outcome.reasons), outcome.reasons  # fmt: skip
    assert any("listing after the case still shows 1 job(s)" in r for r in outcome.reasons)


def test_a_faulted_job_still_listed_unfinished_fails(tmp_path: Path) -> None:
    outcome, _, _ = run(tmp_path, cases=("decode-raise",), faulted_job_listed_unfinished=True)
    assert outcome.outcome is GateOutcome.FAILED
    assert [c.id for c in outcome.cases if c.outcome is GateOutcome.FAILED] == ["decode-raise"]
    reasons = [r for r in outcome.reasons if r.startswith("decode-raise:")]
    assert len(reasons) == 1 and "still shows 1 job(s) of the case unfinished" in reasons[0]
    assert "(in_progress)" in reasons[0]


def test_a_faulted_job_reported_completed_fails(tmp_path: Path) -> None:
    outcome, _, _ = run(tmp_path, cases=("encode-raise", "output-raise"), fault_answered_ok=True)
    assert outcome.outcome is GateOutcome.FAILED
    assert {c.id for c in outcome.cases if c.outcome is GateOutcome.FAILED} == {
        "encode-raise", "output-raise"}
    assert any("reported `completed`" in r for r in outcome.reasons)
    assert any("content was served as a success (HTTP 200)" in r for r in outcome.reasons)
