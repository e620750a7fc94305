"""The golden fixtures follow the rules they illustrate, and a fixture that does not is caught:
a hand-set row state the compiler would not give, a result no judge would give."""

from datetime import timedelta

import pytest

from omniqual.domain.matrix import CompiledMatrix
from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.domain.result import GateResult
from tests.golden import report_fixtures as fx
from tests.golden.fixture_matrix import CACHE, FP8, row_key
from tests.golden.fixture_rules import result_problems, state_mismatches


def _mismatches(recorded: fx.Recorded, matrix: CompiledMatrix | None = None) -> list[str]:
    return state_mismatches(matrix or recorded.compiled, recorded.loaded, recorded.gates,
                            recorded.root, recorded.compiled.compiled_at)  # fmt: skip


@pytest.mark.parametrize("name", ["recorded", "recorded_later", "recorded_big"])
def test_every_fixture_row_state_is_the_one_the_compiler_derives(name: str) -> None:
    assert _mismatches(getattr(fx, name)()) == []


def test_the_golden_matrix_shows_every_state() -> None:
    assert set(fx.matrix().counts().values()) != {0} and all(fx.matrix().counts().values())
    assert all(fx.recorded_big().compiled.counts().values())


def _hand_set(matrix: CompiledMatrix, changes: dict[str, str], **update: object) -> CompiledMatrix:
    key = row_key(changes)
    rows = tuple(r.model_copy(update=update) if r.key == key else r for r in matrix.rows)
    return matrix.model_copy(update={"rows": rows})


@pytest.mark.parametrize(
    ("changes", "update"),
    [
        # A row whose contract evidence reproduced a deviation, claimed validated.
        (FP8, {"state": CellState.VALIDATED, "reasons": (), "limitation": None}),
        # A row without a usable result, claimed validated.
        (CACHE, {"state": CellState.VALIDATED, "reasons": ()}),
        # The right state for a made-up reason.
        (CACHE, {"reasons": ("cache-parity: no usable result", "1 startup-only result")}),
    ],
)
def test_a_hand_set_row_state_is_caught(changes: dict[str, str], update: dict[str, object]) -> None:
    recorded = fx.recorded()
    (problem,) = _mismatches(recorded, _hand_set(recorded.compiled, changes, **update))
    assert problem.startswith(row_key(changes)) and "the compiler gives" in problem


def test_every_fixture_result_is_one_its_judge_gives() -> None:
    assert result_problems(fx.results()) == []
    assert result_problems(fx.big_run_evidence().results) == []
    later = fx.recorded_later().evidence
    assert all((later / run).is_dir() for run in (fx.RUN, fx.LATER_RUN))


def _result(gate: str) -> GateResult:
    return next(r for r in fx.results() if r.gate_id == gate)


def test_a_result_no_judge_would_give_is_caught() -> None:
    contract = next(r for r in fx.results() if r.limitations)
    passed_deviation = contract.model_copy(update={"cases": tuple(
        c.model_copy(update={"outcome": GateOutcome.PASSED}) for c in contract.cases
    )})  # fmt: skip
    sweep = _result("offload-sweep").model_copy(update={"outcome": GateOutcome.PASSED})
    load = _result("load-poisson").model_copy(update={"outcome": GateOutcome.PASSED})
    unlimited = contract.model_copy(update={"limitations": ()})
    problems = result_problems([passed_deviation, sweep, load, unlimited])
    assert any("deviation case images-generations/n/below-min marked passed" in p
               for p in problems)  # fmt: skip
    assert any("served point model is invalid" in p for p in problems)
    assert any("latency_p95 outside its bound" in p for p in problems)
    assert any("no limitation recorded" in p for p in problems)


def test_the_fixtures_are_compiled_at_their_fixed_times() -> None:
    assert fx.matrix().compiled_at == fx.T0
    assert fx.later_matrix().compiled_at == fx.T0 + timedelta(days=1)
