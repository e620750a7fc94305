"""Peers of a faulted request must give their solo same-seed output, not merely succeed: each peer
is served alone (same seed) before any fault, and a peer that answers 200 with other output beside
the fault fails the case, naming the peer and the metric."""

from __future__ import annotations

from pathlib import Path

import pytest

from omniqual.domain.outcomes import GateOutcome
from tests.unit.checks.fault_injection.injector_fake import run_gate, summary_of

ROWS = {"images-generations": ("decode-raise", "pixels differ (PSNR"),
        "videos-async": ("encode-raise", "does not decode")}  # fmt: skip


@pytest.mark.parametrize("api_mode", list(ROWS))
def test_peers_beside_a_fault_answer_their_solo_output(tmp_path: Path, api_mode: str) -> None:
    case, _ = ROWS[api_mode]
    outcome, _, _ = run_gate(tmp_path, api_mode, (case,))
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert "2/2 answered their solo output (exact rule)" in str(summary_of(outcome, case)["peers"])


@pytest.mark.parametrize("api_mode", list(ROWS))
def test_a_peer_that_succeeds_with_other_output_than_alone_fails(
    tmp_path: Path, api_mode: str
) -> None:
    case, metric = ROWS[api_mode]
    # The faulted request is in flight long enough for both peers to arrive beside it.
    outcome, _, _ = run_gate(tmp_path, api_mode, (case,), config={"image_work_s": 0.3},
                             peers_answer_wrong=True)  # fmt: skip
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    assert [c.id for c in outcome.cases if c.outcome is GateOutcome.FAILED] == [case]
    wrong = [r for r in outcome.reasons if "is not its solo same-seed output" in r]
    assert any(r.startswith(f"{case}: peer A (seed 7100)") for r in wrong), outcome.reasons
    assert any(r.startswith(f"{case}: peer B (seed 7101)") for r in wrong), outcome.reasons
    assert all(metric in r and "exact rule" in r for r in wrong), wrong
    # Only the peers were wrong: the known-good request after the fault is its old self.
    assert not any("state leaked" in r for r in outcome.reasons), outcome.reasons
