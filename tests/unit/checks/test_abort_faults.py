"""The abort gate against the in-process fake: passes when clean, and each fault it targets
(ignored cancellation, two terminal states, a leak per abort, a hang after a disconnect) makes
it fail with a reason naming the fault."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from omniqual.checks.abort import AbortCheck
from omniqual.checks.abort.params import AbortParams
from omniqual.checks.base import CheckOutcome
from omniqual.domain.outcomes import GateOutcome
from tests.fakes.check_context import context
from tests.fakes.fake_config import FakeConfig, FakeFaults
from tests.fakes.fake_serial import SerialFakeOmni


def run(tmp_path: Path, api_mode: str, **faults: Any) -> tuple[CheckOutcome, SerialFakeOmni]:
    server = SerialFakeOmni(FakeConfig(
        image_work_s=0.25, video_queue_s=0.02, video_run_s=0.25, temp_dir=tmp_path, hang_s=5,
        faults=FakeFaults(**faults)))  # fmt: skip
    params = AbortParams(min_service_s=0.2, watch_dirs=(str(tmp_path),), settle_max_s=0.5,
                         health_timeout_s=0.5, cancel_recheck_x_service=1.5)  # fmt: skip
    ctx, _ = context("abort", api_mode, fake=server)
    return asyncio.run(AbortCheck().run(ctx, params)), server


@pytest.mark.parametrize("api_mode", ["images-generations", "videos-async"])
def test_clean_fake_passes_every_case(tmp_path: Path, api_mode: str) -> None:
    outcome, server = run(tmp_path, api_mode)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    ids = {case.id for case in outcome.cases}
    if api_mode == "videos-async":
        assert {"cancel-after-create", "cancel-queued", "cancel-middle", "cancel-twice",
                "cancel-finished"} <= ids  # fmt: skip
        assert server.state.cancelled_jobs >= 5
    else:
        assert {"disconnect-queued", "disconnect-early", "disconnect-late", "disconnect-burst",
                "client-timeout"} <= ids  # fmt: skip
        assert server.state.aborted >= 6  # every cut reached the server as an abort
    assert all(case.outcome is GateOutcome.PASSED for case in outcome.cases)
    assert {a.name for a in outcome.artifacts} == {"abort-resources.jsonl", "abort-summary.json"}


def test_ignored_cancellation_fails_naming_it(tmp_path: Path) -> None:
    outcome, _ = run(tmp_path, "videos-async", ignores_cancellation=True)
    assert outcome.outcome is GateOutcome.FAILED
    assert any("served content (HTTP 200) after DELETE" in r and "cancellation ignored" in r
               for r in outcome.reasons)  # fmt: skip
    failed = {c.id for c in outcome.cases if c.outcome is GateOutcome.FAILED}
    assert "cancel-middle" in failed


def test_two_terminal_states_fail_naming_them(tmp_path: Path) -> None:
    outcome, _ = run(tmp_path, "videos-async", two_terminal_states=True)
    assert outcome.outcome is GateOutcome.FAILED
    assert any("two terminal states (completed then failed)" in r for r in outcome.reasons)


def test_leak_per_abort_fails_cleanup(tmp_path: Path) -> None:
    outcome, _ = run(tmp_path, "images-generations", leaks_per_abort=True)
    assert outcome.outcome is GateOutcome.FAILED
    assert any("memory did not return to baseline" in r for r in outcome.reasons)
    assert any("files in watched temp dirs grew" in r for r in outcome.reasons)


def test_hang_after_disconnect_fails_health(tmp_path: Path) -> None:
    outcome, _ = run(tmp_path, "images-generations", hangs_after_disconnect=True)
    assert outcome.outcome is GateOutcome.FAILED
    assert any("GET /health gave no answer" in r and "hangs" in r for r in outcome.reasons)


def test_api_mode_without_endpoint_is_skipped(tmp_path: Path) -> None:
    outcome, server = run(tmp_path, "offline")
    assert outcome.outcome is GateOutcome.SKIPPED
    assert server.state.requests_total == 0
