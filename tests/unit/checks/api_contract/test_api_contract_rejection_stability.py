"""G0-07: every rejection answers the same error class (status, type, code, param) when sent
again, and the sync and async video paths answer the same class for the same invalid request
(where no declared deviation of the release covers either). A server that answers otherwise
fails the gate, naming the case and both classes."""

from __future__ import annotations

import httpx
from conftest import GateRun, run_gate

from omniqual.checks.api_contract.stability import STABILITY_CASE
from omniqual.domain.outcomes import GateOutcome
from tests.fakes import FakeConfig, FakeOmni
from tests.fakes.fake_core import Outcome, Reply


def _retyped(reply: Reply, error_type: str) -> Reply:
    body = reply.response.json()
    body["error"]["type"] = error_type
    return Reply(httpx.Response(reply.response.status_code, json=body), reply.route)


class FlakyRejections(FakeOmni):
    """The clean fake, except that every second rejection on ``path`` names another error type."""

    def __init__(self, config: FakeConfig, path: str) -> None:
        super().__init__(config)
        self.path, self.seen = path, 0

    def plan(self, request: httpx.Request) -> Outcome:
        outcome = super().plan(request)
        rejected = isinstance(outcome, Reply) and outcome.response.status_code == 400
        if rejected and request.url.path == self.path and isinstance(outcome, Reply):
            self.seen += 1
            if self.seen % 2 == 0:
                return _retyped(outcome, "ValueError")
        return outcome


class SyncSaysOtherwise(FakeOmni):
    """The clean fake, except that the sync video path names another error type than async."""

    def plan(self, request: httpx.Request) -> Outcome:
        outcome = super().plan(request)
        if (request.url.path == "/v1/videos/sync" and isinstance(outcome, Reply)
                and outcome.response.status_code == 400):  # fmt: skip
            return _retyped(outcome, "PipelineError")
        return outcome


def _stability(run: GateRun) -> object:
    return next(c for c in run.outcome.cases if c.id == STABILITY_CASE)


def test_a_rejection_that_changes_on_repeat_fails(fake_config: FakeConfig) -> None:
    fake = FlakyRejections(fake_config, "/v1/images/generations")
    run = run_gate(fake, api_modes=["images-generations"], temp_dirs=[str(fake_config.temp_dir)])
    assert run.outcome.outcome is GateOutcome.FAILED
    unstable = [r for r in run.outcome.reasons if r.startswith("unstable_rejection")]
    assert unstable and "ValueError" in unstable[0] and "G0-07" in unstable[0]
    assert _stability(run).outcome is GateOutcome.FAILED  # type: ignore[attr-defined]


def test_sync_and_async_rejections_of_another_class_fail(fake_config: FakeConfig) -> None:
    run = run_gate(SyncSaysOtherwise(fake_config), api_modes=["videos-async", "videos-sync"],
                   parity=False, temp_dirs=[str(fake_config.temp_dir)])  # fmt: skip
    assert run.outcome.outcome is GateOutcome.FAILED
    differ = [r for r in run.outcome.reasons if r.startswith("sync_async_rejection_differs")]
    assert differ and "PipelineError" in differ[0], run.outcome.reasons


def test_a_stable_server_passes_the_check(fake_config: FakeConfig) -> None:
    run = run_gate(FakeOmni(fake_config), api_modes=["videos-async", "videos-sync"],
                   parity=False, temp_dirs=[str(fake_config.temp_dir)])  # fmt: skip
    result = _stability(run)
    assert result.outcome is GateOutcome.PASSED, run.outcome.reasons  # type: ignore[attr-defined]
    assert "sync/async" in result.note  # type: ignore[attr-defined]
