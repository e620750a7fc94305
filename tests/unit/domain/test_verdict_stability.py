"""The stability table: agreement per gate on a row, pass/fail movement, row states."""

from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.domain.verdict_stability import RunVerdicts, stability

P, F, INV = GateOutcome.PASSED, GateOutcome.FAILED, GateOutcome.INVALID
V, L, N = CellState.VALIDATED, CellState.LIMITED, CellState.NOT_TESTED


def run(run_id: str, gates: dict[tuple[str, str], GateOutcome], states: dict[str, CellState]
        ) -> RunVerdicts:  # fmt: skip
    return RunVerdicts(run_id, {k: (o, f"{k[0]} said {o.value}") for k, o in gates.items()}, states)


def test_identical_runs_agree_everywhere() -> None:
    runs = [run(f"r{i}", {("soak", "a"): P, ("abort", "a"): INV}, {"a": L}) for i in range(3)]
    table = stability(runs)
    assert table.agreement == 1.0
    assert not table.flips and not table.unstable_rows and not table.unstable_gates
    assert [g.agreeing for g in table.gates] == [3, 3]


def test_passed_and_failed_across_runs_is_a_flip_invalid_is_not() -> None:
    runs = [
        run("r1", {("soak", "a"): P, ("abort", "a"): P}, {"a": V}),
        run("r2", {("soak", "a"): F, ("abort", "a"): INV}, {"a": N}),
        run("r3", {("soak", "a"): P, ("abort", "a"): P}, {"a": V}),
    ]
    table = stability(runs)
    flips = table.flips
    assert [(g.gate_id, g.row) for g in flips] == [("soak", "a")]
    abort = next(g for g in table.gates if g.gate_id == "abort")
    assert not abort.pass_fail_flip and not abort.stable and abort.agreeing == 2
    assert table.agreement == 0.0
    # r2 compiled "not tested": still a changed state for a row other runs touched
    assert [r.row for r in table.unstable_rows] == ["a"]
    assert table.unstable_rows[0].states == (V, N, V)


def test_a_gate_one_run_did_not_run_counts_only_the_runs_that_ran_it() -> None:
    runs = [
        run("r1", {("soak", "a"): P}, {"a": V}),
        run("r2", {}, {"a": V}),
    ]
    gate = stability(runs).gates[0]
    assert gate.outcomes == (P, None)
    assert gate.ran == 1 and gate.stable
    assert gate.reasons == ("soak said passed", "")


def test_rows_no_run_touched_are_left_out() -> None:
    runs = [run("r1", {}, {"a": N, "b": V}), run("r2", {}, {"a": N, "b": V})]
    assert [r.row for r in stability(runs).rows] == ["b"]
