"""The stability table: agreement per gate on a row, pass/fail movement, row states, how often
a gate decided at all, and one build per table."""

import pytest

from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.domain.verdict_stability import MixedBuilds, RunVerdicts, stability

P, F, INV = GateOutcome.PASSED, GateOutcome.FAILED, GateOutcome.INVALID
V, L, N = CellState.VALIDATED, CellState.LIMITED, CellState.NOT_TESTED


def run(run_id: str, gates: dict[tuple[str, str], GateOutcome], states: dict[str, CellState]
        ) -> RunVerdicts:  # fmt: skip
    return RunVerdicts(run_id, {k: (o, f"{k[0]} said {o.value}") for k, o in gates.items()}, states)


def test_identical_runs_agree_everywhere() -> None:
    runs = [run(f"r{i}", {("soak", "a"): P, ("abort", "a"): F}, {"a": L}) for i in range(3)]
    table = stability(runs)
    assert table.agreement == 1.0
    assert not table.flips and not table.unstable_rows and not table.unstable_gates
    assert [g.agreeing for g in table.gates] == [3, 3]
    assert [g.decided for g in table.gates] == [3, 3] and table.decisiveness == 1.0


def test_a_gate_invalid_in_every_run_never_decided_and_is_not_stable() -> None:
    runs = [run(f"r{i}", {("soak", "a"): P, ("abort", "a"): INV}, {"a": L}) for i in range(3)]
    table = stability(runs)
    abort = next(g for g in table.gates if g.gate_id == "abort")
    assert abort.agreeing == 3 and not abort.stable and not abort.pass_fail_flip
    assert table.unstable_gates == (abort,)
    assert table.agreement == 0.5  # soak decided alike in every run, abort never decided
    assert abort.decided == 0 and abort.never_decided and table.never_decided == (abort,)


def test_decisiveness_counts_invalid_verdicts_in_its_denominator() -> None:
    runs = [
        run("r1", {("soak", "a"): P, ("abort", "a"): INV}, {"a": V}),
        run("r2", {("soak", "a"): INV, ("abort", "a"): INV}, {"a": V}),
        run("r3", {("soak", "a"): P}, {"a": V}),
    ]
    table = stability(runs)
    soak = next(g for g in table.gates if g.gate_id == "soak")
    assert (soak.decided, soak.ran, soak.decisiveness) == (2, 3, 2 / 3)
    assert not soak.never_decided and not soak.stable
    assert table.decided == 2 and table.verdicts == 5 and table.decisiveness == 2 / 5
    assert table.undecided_counts == {INV: 3}


def test_runs_of_different_builds_are_refused_naming_what_differs() -> None:
    one = {"omniqual": frozenset({"0.1.0"}), "vllm_omni_version on a": frozenset({"0.30.0"})}
    runs = [
        RunVerdicts("r1", {("soak", "a"): (P, "")}, {"a": V}, build=one),
        RunVerdicts("r2", {("soak", "a"): (P, "")}, {"a": V}, build=one),
        RunVerdicts("r3", {("soak", "a"): (P, "")}, {"a": V},
                    build={**one, "vllm_omni_version on a": frozenset({"0.31.0"})}),
    ]  # fmt: skip
    with pytest.raises(MixedBuilds, match=r"r3 differs from r1 in vllm_omni_version on a "
                       r"\(0\.30\.0 in r1, 0\.31\.0 in r3\)"):  # fmt: skip
        stability(runs)
    newer = {**one, "omniqual": frozenset({"0.2.0"})}
    with pytest.raises(MixedBuilds, match="omniqual"):
        stability([runs[0], RunVerdicts("r2", {}, {}, build=newer)])


def test_a_fact_only_one_run_records_is_no_difference() -> None:
    # A row only one run reached says nothing of the other's build.
    runs = [
        RunVerdicts("r1", {}, {}, build={"checkpoint_sha256 on a": frozenset({"c1"})}),
        RunVerdicts("r2", {}, {}, build={"checkpoint_sha256 on b": frozenset({"c2"})}),
    ]
    assert stability(runs).run_ids == ("r1", "r2")
    later = RunVerdicts("r3", {}, {}, build={"checkpoint_sha256 on b": frozenset({"c3"})})
    with pytest.raises(MixedBuilds, match="r3 differs from r2 in checkpoint_sha256 on b"):
        stability([*runs, later])


def test_a_resumed_run_is_marked() -> None:
    runs = [RunVerdicts("r1", {}, {}, sessions=2), RunVerdicts("r2", {}, {})]
    assert stability(runs).resumed == (True, False)


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
