"""Where a run stands, folded from hand-made events with hand-given clock readings."""

from datetime import UTC, datetime, timedelta

import pytest

from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.result import GateResult
from omniqual.engine.run.events import (
    GateFinished,
    GateProgress,
    GateStarted,
    PlannedItem,
    PlanReady,
    TargetReady,
    TargetStarting,
)
from omniqual.engine.run.run_progress import RunProgress
from tests.fakes.priors import worked_priors  # noqa: F401 (the fixture)

pytestmark = pytest.mark.usefixtures("worked_priors")

ROW = "model=m;task=t2i"
PLAN = PlanReady(
    (PlannedItem("api-contract", "api_contract", ROW, "live"),
     PlannedItem("soak", "soak", ROW, "live"),
     PlannedItem("api-contract", "api_contract", "model=m;task=t2v", "live")),
    launches=1,
)  # fmt: skip


def finished(gate: str, kind: str, seconds: float, row: str = ROW) -> GateFinished:
    at = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    return GateFinished(GateResult(
        result_id="r", run_id="run", gate_id=gate, gate_version=1, gate_kind=kind, row=row,
        outcome=GateOutcome.PASSED, target="live", started_at=at,
        finished_at=at + timedelta(seconds=seconds),
    ))  # fmt: skip


def test_nothing_is_known_before_the_plan() -> None:
    assert RunProgress().left(0.0) is None


def test_the_estimate_follows_the_run() -> None:
    run = RunProgress()
    run.observe(PLAN, 0.0)
    start = run.left(0.0)
    assert start is not None and start.estimating
    assert start.seconds == 240.0 + 600.0 + 240.0 + 120.0
    run.observe(TargetStarting("live"), 0.0)
    launching = run.left(50.0)
    assert launching is not None and launching.seconds == 1080.0 + 70.0
    run.observe(TargetReady("live", "http://x", 40.0), 50.0)
    assert run.launch is None and run.measured().startups == [40.0]
    run.observe(GateStarted("api-contract", ROW), 50.0)
    run.observe(GateProgress("api-contract", "case 3 of 9", 0.3), 60.0)
    assert run.gate is not None and run.gate.note == "case 3 of 9"
    running = run.left(110.0)  # 60 s into a gate whose prior is 240 s
    assert running is not None and running.seconds == 180.0 + 600.0 + 240.0
    assert not running.estimating
    run.observe(finished("api-contract", "api_contract", 30.0), 80.0)
    after = run.left(80.0)
    assert after is not None and after.seconds == 600.0 + 30.0  # the second contract: as measured
    assert (run.started, run.finished, run.planned) == (1, 1, 3)
    assert run.gate is None


def test_a_relaunch_past_the_plan_is_counted_while_it_starts_and_never_below_zero() -> None:
    run = RunProgress()
    run.observe(PlanReady((PlannedItem("soak", "soak", ROW, "live"),), launches=1), 0.0)
    for at in (0.0, 100.0):
        run.observe(TargetStarting("live"), at)
        run.observe(TargetReady("live", "http://x", 20.0), at + 20.0)
    run.observe(TargetStarting("live"), 200.0)
    left = run.left(210.0)
    assert left is not None and left.seconds == 600.0 + 10.0


def test_a_gate_the_plan_did_not_name_is_measured_without_changing_the_plan() -> None:
    run = RunProgress()
    run.observe(PLAN, 0.0)
    run.observe(GateStarted("other", ROW), 0.0)
    run.observe(finished("other", "soak", 100.0), 100.0)
    left = run.left(100.0)
    assert left is not None and left.seconds == 240.0 + 100.0 + 240.0 + 120.0


def test_the_time_a_measuring_gate_was_away_for_its_start_ups_is_measured_by_kind() -> None:
    run = RunProgress()
    event = finished("faults", "fault_injection", 60.0)
    away = event.result.model_copy(update={"effective": {"stepped_aside_s": 40.5}})
    run.observe(GateFinished(away), 60.0)
    run.observe(finished("soak", "soak", 100.0), 160.0)  # a gate that never stepped aside
    assert run.measured().aside_by_kind == {"fault_injection": [40.5]}


def test_a_gate_of_the_other_group_is_still_under_way_when_the_latest_one_ends() -> None:
    # Two launch groups at once: the soak began first, the api-contract on t2v after it and
    # ended first; the soak is what the run is doing now, not "nothing".
    run = RunProgress()
    run.observe(PLAN, 0.0)
    run.observe(GateStarted("soak", ROW), 10.0)
    run.observe(GateStarted("api-contract", "model=m;task=t2v"), 20.0)
    run.observe(finished("api-contract", "api_contract", 5.0, "model=m;task=t2v"), 25.0)
    assert run.gate is not None
    assert (run.gate.name, run.gate.row, run.gate.since) == ("soak", ROW, 10.0)
    run.observe(finished("soak", "soak", 30.0), 40.0)
    assert run.gate is None


def test_a_progress_note_stays_with_the_gate_that_sent_it() -> None:
    run = RunProgress()
    run.observe(PLAN, 0.0)
    run.observe(GateStarted("soak", ROW), 10.0)
    run.observe(GateStarted("api-contract", "model=m;task=t2v"), 20.0)
    run.observe(GateProgress("soak", "phase near", 0.5), 30.0)
    assert run.gate is not None and run.gate.name == "api-contract" and run.gate.note == ""
    run.observe(GateProgress("api-contract", "case 3 of 9", 0.3), 31.0)
    assert run.gate.note == "case 3 of 9"
