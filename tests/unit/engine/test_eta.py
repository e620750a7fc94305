"""The time left of a run, from hand-made plans and measurements (exact seconds)."""

import pytest

from omniqual.engine.run.eta import (
    DEFAULT_GATE_PRIOR_S,
    GATE_PRIORS_S,
    STARTUP_PRIOR_S,
    Measured,
    Remaining,
    estimate_left,
    gate_seconds,
)
from omniqual.engine.run.events import PlannedItem
from tests.fakes.priors import worked_priors  # noqa: F401 (the fixture)

pytestmark = pytest.mark.usefixtures("worked_priors")


def item(gate: str, kind: str, row: str = "task=t2i") -> PlannedItem:
    return PlannedItem(gate, kind, row, "live")


CONTRACT = item("api-contract", "api_contract")
SOAK = item("soak", "soak")
THIRD_PARTY = item("mine", "my_kind")


def test_before_any_measurement_the_priors_are_summed_and_the_figure_says_estimating() -> None:
    left = estimate_left(Remaining([CONTRACT, SOAK, THIRD_PARTY], launches=2), Measured())
    assert GATE_PRIORS_S["api_contract"] == 60.0 and GATE_PRIORS_S["soak"] == 300.0  # shipped
    assert (DEFAULT_GATE_PRIOR_S, STARTUP_PRIOR_S) == (300.0, 45.0)
    assert left.seconds == 240.0 + 600.0 + 300.0 + 2 * 120.0
    assert left.estimating


def test_a_gate_takes_its_own_mean_then_its_kinds_then_the_prior() -> None:
    measured = Measured(by_gate={"api-contract": [10.0, 20.0]},
                        by_kind={"api_contract": [100.0], "soak": [50.0, 70.0]})  # fmt: skip
    assert gate_seconds(CONTRACT, measured) == 15.0
    assert gate_seconds(item("api-contract-2", "api_contract"), measured) == 100.0
    assert gate_seconds(SOAK, measured) == 60.0
    assert gate_seconds(THIRD_PARTY, measured) == DEFAULT_GATE_PRIOR_S


def test_remaining_gates_and_launches_use_the_measured_means() -> None:
    measured = Measured(by_gate={"api-contract": [10.0, 20.0]}, by_kind={"soak": [80.0]},
                        startups=[30.0, 50.0])  # fmt: skip
    left = estimate_left(Remaining([CONTRACT, CONTRACT, SOAK], launches=3), measured)
    assert left.seconds == 15.0 * 2 + 80.0 + 3 * 40.0
    assert not left.estimating


def test_what_is_under_way_counts_for_what_it_has_left_and_never_below_nothing() -> None:
    measured = Measured(by_kind={"soak": [100.0]}, startups=[60.0])
    under_way = Remaining([], launches=0, running=[(SOAK, 30.0)], launching_s=45.0)
    assert estimate_left(under_way, measured).seconds == 70.0 + 15.0
    overdue = Remaining([], launches=0, running=[(SOAK, 130.0)], launching_s=90.0)
    assert estimate_left(overdue, measured).seconds == 0.0


def test_with_lanes_measuring_gates_stay_one_at_a_time_and_the_rest_is_shared_out() -> None:
    """Two launch groups at once: a soak still has the host to itself, start-ups and a
    contract run beside each other's."""
    measured = Measured(by_kind={"soak": [100.0], "api_contract": [20.0]}, startups=[30.0])
    soak, contract = item("soak", "soak"), item("api-contract", "api_contract")
    soak = PlannedItem(soak.gate, soak.kind, soak.row, soak.recipe, measures=True)
    plan = Remaining([soak, soak, contract, contract], launches=2, running=[(contract, 5.0)])
    assert estimate_left(plan, measured).seconds == 200.0 + 20.0 * 2 + 15.0 + 2 * 30.0
    two = Remaining(plan.gates, plan.launches, plan.running, lanes=2)
    assert estimate_left(two, measured).seconds == 200.0 + (40.0 + 15.0 + 60.0) / 2


def test_one_measured_start_up_is_enough_to_stop_estimating() -> None:
    left = estimate_left(Remaining([SOAK], launches=-1), Measured(startups=[12.0]))
    assert left.seconds == 600.0  # relaunches past the plan never make the figure negative
    assert not left.estimating


def test_a_measuring_gate_that_shares_its_start_ups_runs_alone_only_for_the_rest() -> None:
    """Two lanes: fault-injection gates took 60 s of which 40 s away from the host for their
    own start-ups (shared out among the lanes); before any was measured, all of it is alone."""
    faults = PlannedItem("faults", "fault_injection", "task=t2i", "live", measures=True,
                         shares_start_ups=True)  # fmt: skip
    measured = Measured(by_kind={"fault_injection": [60.0]}, startups=[30.0],
                        aside_by_kind={"fault_injection": [40.0]})  # fmt: skip
    plan = Remaining([faults, faults], launches=0, running=[(faults, 30.0)], lanes=2)
    assert estimate_left(plan, measured).seconds == 20.0 * 2 + 10.0 + (40.0 * 2 + 20.0) / 2
    unmeasured = Measured(by_kind={"fault_injection": [60.0]})
    assert estimate_left(plan, unmeasured).seconds == 60.0 * 2 + 30.0
    keeps = PlannedItem("sweep", "fault_injection", "task=t2i", "live", measures=True)
    assert estimate_left(Remaining([keeps], 0, lanes=2), measured).seconds == 60.0
