"""G0-25: a row advertises a task on an API mode; the model's contract (what the gate's requests,
the report's curls and the output checks are made from) must declare an endpoint for exactly
that task and mode. One that leaves the row's task out fails the gate, naming both."""

from __future__ import annotations

from conftest import run_gate

from omniqual.domain.outcomes import GateOutcome
from tests.fakes import FakeConfig, FakeOmni


def test_a_row_whose_task_the_contract_leaves_out_fails(fake_config: FakeConfig) -> None:
    row = {"model": "fake-omni", "task": "ti2v", "api_mode": "videos-sync"}
    run = run_gate(FakeOmni(fake_config), row=row)
    assert run.outcome.outcome is GateOutcome.FAILED
    reason = run.outcome.reasons[0]
    assert "ti2v" in reason and "videos-sync" in reason and "G0-25" in reason


def test_a_row_whose_task_the_contract_declares_runs_its_endpoint(
    fake_config: FakeConfig,
) -> None:
    row = {"model": "fake-omni", "task": "t2a", "api_mode": "audio-generate"}
    run = run_gate(FakeOmni(fake_config), row=row, temp_dirs=[str(fake_config.temp_dir)])
    assert not any("G0-25" in reason for reason in run.outcome.reasons)
    assert {c.endpoint for c in run.outcome.cases} <= {"audio-generate", "-"}
    assert any(c.endpoint == "audio-generate" for c in run.outcome.cases)
