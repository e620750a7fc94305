"""On a request-batch row a fault inside a batch fails the whole batch (vLLM-Omni runs a request
batch as one ``forward``), so the gate's peers must never share the faulted request's batch:
they are sent with one more denoise step (a batch key of their own) and queue beside it instead.
The faulted request itself is the one the arm targets (its seed)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import httpx

from omniqual.checks.base import CheckOutcome
from omniqual.checks.fault_injection import FaultInjectionCheck, FaultInjectionParams
from omniqual.deploy.fault_control import FaultChannel
from omniqual.domain.fault_injection import FaultEvent
from omniqual.domain.gate import GateSpec
from omniqual.domain.matrix import RestartPolicy
from omniqual.domain.outcomes import GateOutcome
from tests.fakes.check_context import context
from tests.fakes.fake_batching import BatchingFakeOmni, _Pending
from tests.fakes.fake_config import FakeConfig, FakeInjection


class OneForwardBatches(BatchingFakeOmni):
    """A batch holding the faulted request fails as one, as vLLM-Omni's batched forward does."""

    capacity = 3
    batch_wait_s = 0.05

    def _faulty(self, batch: list[_Pending], replies: list) -> list[httpx.Response]:  # type: ignore[type-arg]
        responses = super()._faulty(batch, replies)
        faulted = [r for r in responses if b"omniqual injected fault" in r.content]
        return [faulted[0] for _ in responses] if faulted else responses


def run(tmp_path: Path) -> tuple[CheckOutcome, FaultChannel]:
    channel = FaultChannel.in_dir(tmp_path / "channel")
    server = OneForwardBatches(FakeConfig(image_work_s=0.05, injector=FakeInjection(
        control=channel.control, record=channel.record)))  # fmt: skip
    server._injector()
    (tmp_path / "server-tmp").mkdir()
    params = FaultInjectionParams(
        cases=("denoise-early-raise",), peers=2, peer_delay_s=0.0, request_timeout_s=5,
        error_deadline_s=3, health_timeout_s=0.5, recover_deadline_s=1.5, exit_deadline_s=0.5,
        settle_max_s=0.2, control_path=str(channel.control), record_path=str(channel.record),
        watch_dirs=(str(tmp_path / "server-tmp"),))  # fmt: skip
    ctx, _ = context("abort", "images-generations", fake=server)
    ctx = replace(ctx, gate=GateSpec(id="fault-injection", kind="fault_injection", version=1),
                  restart_policy=RestartPolicy.RECOVERS)  # fmt: skip
    return asyncio.run(FaultInjectionCheck().run(ctx, params)), channel


def test_peers_never_share_the_faulted_requests_batch(tmp_path: Path) -> None:
    outcome, channel = run(tmp_path)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    summary = outcome.effective["fault_injection"]
    assert isinstance(summary, dict)
    case = summary["denoise-early-raise"]
    assert str(case["peers"]).startswith("peers 2/2 succeeded")
    assert case["faulted_seed"] is not None
    arms = [r for r in channel.records() if r.event is FaultEvent.FIRED]
    assert [r.case_id for r in arms] == ["denoise-early-raise"]
