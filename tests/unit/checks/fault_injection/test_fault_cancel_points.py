"""Cancellation at each point of a request's life is its own case: the injector holds the request
there (queued behind a held peer, after encoding, before decoding, while the output is encoded)
and its client cancels it while held. A clean server passes each; a queued request that runs
after its cancel, a cancelled job that completes and serves, a server that hangs afterwards, and
a peer answering other output than alone each fail naming it; a point the release has no hook
for is invalid with that reason, never passed."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from omniqual.checks.fault_injection import FaultInjectionParams
from omniqual.checks.fault_injection.judge import Verdict
from omniqual.checks.fault_injection.judge_held import judge_left
from omniqual.domain.fault_injection import FaultEvent
from omniqual.domain.outcomes import GateOutcome
from tests.fakes.fake_omni import FakeOmni
from tests.fakes.fake_serial import SerialFakeOmni
from tests.unit.checks.fault_injection.injector_fake import POINTS, run_gate, summary_of

# A sync row computes one request at a time (a request waits queued behind a held one); the fake's
# jobs run side by side, each on its own clock.
SERVERS: dict[str, type[FakeOmni]] = {"images-generations": SerialFakeOmni,
                                      "videos-async": FakeOmni}  # fmt: skip


@pytest.mark.parametrize("api_mode", list(SERVERS))
def test_each_cancel_point_passes_on_a_clean_server(tmp_path: Path, api_mode: str) -> None:
    outcome, _, channel = run_gate(tmp_path, api_mode, POINTS, server=SERVERS[api_mode])
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert [c.id for c in outcome.cases] == list(POINTS)
    fired = [r for r in channel.records() if r.event is FaultEvent.FIRED]
    assert [r.case_id for r in fired] == list(POINTS)  # one hold each; no tripwire fired
    for case in POINTS:
        summary = summary_of(outcome, case)
        assert summary["mode"] == "hold" and summary["recovered"] is True
        assert summary["same_output"] is True and summary["ran_after_cancel"] is None
        client = str(summary["client"])
        assert ("DELETE HTTP 200" in client) if api_mode == "videos-async" else (
            client.startswith("cut after")), client  # fmt: skip
        assert "0 request(s) left" in str(summary["peers"]), summary["peers"]
        assert "answered their solo output (exact rule)" in str(summary["peers"])
    assert summary_of(outcome, "cancel-before-admission")["held_seed"] == 7100  # peer A


def test_a_queued_request_that_runs_after_its_cancel_fails(tmp_path: Path) -> None:
    outcome, _, _ = run_gate(tmp_path, "images-generations", ("cancel-before-admission",),
                             server=SerialFakeOmni, runs_cancelled_queued=True)  # fmt: skip
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    assert any(r.startswith("cancel-before-admission: the request cancelled while queued ran "
                            "after its cancel") for r in outcome.reasons), outcome.reasons
    assert summary_of(outcome, "cancel-before-admission")["ran_after_cancel"] is not None


def test_a_point_the_release_has_no_hook_for_is_invalid_never_passed(tmp_path: Path) -> None:
    outcome, _, _ = run_gate(tmp_path, "images-generations", POINTS, server=SerialFakeOmni,
                             stages=("encode", "denoise", "decode", "output"))  # fmt: skip
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    verdicts = {c.id: c.outcome for c in outcome.cases}
    assert verdicts.pop("cancel-after-encode") is GateOutcome.INVALID
    assert set(verdicts.values()) == {GateOutcome.PASSED}
    assert any(r.startswith("cancel-after-encode: the hold of the request after encoding")
               and "no hook reached at that point" in r for r in outcome.reasons), outcome.reasons


def test_a_cancelled_job_that_completes_and_serves_its_content_fails(tmp_path: Path) -> None:
    outcome, _, _ = run_gate(tmp_path, "videos-async", ("cancel-before-decode",),
                             ignores_cancellation=True)  # fmt: skip
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    assert any("completed after the cancel" in r for r in outcome.reasons), outcome.reasons
    assert any("served its content" in r for r in outcome.reasons), outcome.reasons


def test_a_server_that_hangs_after_a_held_cancel_fails(tmp_path: Path) -> None:
    outcome, _, _ = run_gate(tmp_path, "images-generations", ("cancel-before-decode",),
                             server=SerialFakeOmni, hangs_after_disconnect=True)  # fmt: skip
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    assert any("neither recovered" in r for r in outcome.reasons), outcome.reasons


def test_a_peer_answering_other_output_beside_a_cancel_fails(tmp_path: Path) -> None:
    outcome, _, _ = run_gate(tmp_path, "images-generations", ("cancel-before-decode",),
                             server=SerialFakeOmni, peers_answer_wrong=True)  # fmt: skip
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    assert any(r.startswith("cancel-before-decode: peer A (seed 7100) is not its solo same-seed "
                            "output (exact rule): pixels differ (PSNR")
               and "beside a request cancelled before decoding" in r
               for r in outcome.reasons), outcome.reasons  # fmt: skip


def test_requests_left_after_the_case_fail_and_unknown_ones_are_invalid() -> None:
    left = Verdict()
    assert judge_left(1, 0.3, left) == "1 request(s) left"
    assert left.failures and "not removed" in left.failures[0] and not left.invalid
    unknown = Verdict()
    judge_left(None, 0.3, unknown)
    assert unknown.invalid and not unknown.failures
    clean = Verdict()
    judge_left(0, 0.3, clean)
    assert not clean.failures and not clean.invalid


def test_the_queued_cancel_must_land_well_within_the_hold() -> None:
    with pytest.raises(ValidationError, match=r"queue_s .* must be below half of hold_s"):
        FaultInjectionParams(hold_s=1.0, queue_s=0.5)
