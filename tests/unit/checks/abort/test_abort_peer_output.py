"""The peer a queued cut waits behind must give its solo same-seed output, not merely succeed:
its output is recorded alone first (same seed), and a peer that answers 200 with other output
beside the cut fails the case, naming the peer and the metric."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from omniqual.checks.abort import AbortCheck
from omniqual.checks.abort.params import AbortParams
from omniqual.checks.base import CheckOutcome
from omniqual.domain.axes import RowKey
from omniqual.domain.outcomes import GateOutcome
from tests.fakes.check_context import context
from tests.fakes.fake_config import FakeConfig, FakeFaults
from tests.fakes.fake_serial import SerialFakeOmni
from tests.unit.checks.test_abort_faults import SIZED_FOR_THE_FAKE

QUEUED = {"images-generations": "disconnect-queued", "videos-async": "cancel-queued"}


def run(tmp_path: Path, api_mode: str, **faults: bool) -> CheckOutcome:
    server = SerialFakeOmni(FakeConfig(
        image_work_s=0.15, video_queue_s=0.02, video_run_s=0.15, temp_dir=tmp_path, hang_s=5,
        faults=FakeFaults(**faults)))  # fmt: skip
    params = AbortParams(min_service_s=0.12, watch_dirs=(str(tmp_path),),
                         gauges_prove_stop=True, **SIZED_FOR_THE_FAKE)
    ctx, _ = context("abort", api_mode, fake=server)
    ctx = replace(ctx, row=RowKey((*ctx.row.items, ("execution", "serial/1"))))
    return asyncio.run(AbortCheck().run(ctx, params))


@pytest.mark.parametrize("api_mode", list(QUEUED))
def test_the_peer_of_a_queued_cut_is_held_to_its_solo_output(tmp_path: Path, api_mode: str) -> None:
    outcome = run(tmp_path, api_mode)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    case = next(c for c in outcome.cases if c.id == QUEUED[api_mode])
    assert "peer A (seed 7100): its solo output (exact rule)" in case.observed_status


@pytest.mark.parametrize("api_mode", list(QUEUED))
def test_a_peer_that_succeeds_with_other_output_than_alone_fails(
    tmp_path: Path, api_mode: str
) -> None:
    outcome = run(tmp_path, api_mode, peers_answer_wrong=True)
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    failed = {c.id for c in outcome.cases if c.outcome is GateOutcome.FAILED}
    assert failed == {QUEUED[api_mode]}, outcome.reasons
    reason = next(r for r in outcome.reasons if r.startswith(QUEUED[api_mode]))
    assert "peer A (seed 7100)" in reason and "is not its solo same-seed output" in reason
    metric = "pixels differ (PSNR" if api_mode == "images-generations" else "does not decode"
    assert metric in reason, reason
