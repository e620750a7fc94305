"""Recommendation ranking: among rows the compiled matrix qualifies on one deployment with the
recommended-deployment gates passed, the best by the objective wins; the least-memory eligible
row is named on its own; every other row is listed with why."""

from omniqual.compile.matrix import LocatedResult, compile_matrix
from omniqual.compile.recommend import Objective, Recommendation, recommend_matrix
from omniqual.domain.matrix import RowSpec
from omniqual.domain.outcomes import CellState
from omniqual.domain.outcomes import GateOutcome as O
from tests.unit.compile.deployments import BASELINE_GATES, GATES, Recorder, key, matrix

NAMES = ("fast", "lean", "middle", "wrong", "unsoaked")
ROWS = {name: key(quantization=name) for name in NAMES}
LOADED = matrix(*(({"quantization": name}, RowSpec(requires=BASELINE_GATES, recipe=name))
                  for name in NAMES))  # fmt: skip


def recorded() -> Recorder:
    record = Recorder()
    record.passes(ROWS["fast"], BASELINE_GATES, latency=0.10, qps=9.0, mib=900.0)
    record.passes(ROWS["lean"], BASELINE_GATES, latency=0.30, qps=3.0, mib=200.0)
    record.passes(ROWS["middle"], BASELINE_GATES, latency=0.20, qps=5.0, mib=500.0)
    # Faster, but wrong: never chosen.
    record.passes(ROWS["wrong"], BASELINE_GATES, latency=0.01, qps=99.0, mib=10.0)
    record(ROWS["wrong"], "reference-parity", O.FAILED)
    record.passes(ROWS["unsoaked"], BASELINE_GATES[:-1], latency=0.05)
    return record


def chosen(objective: Objective) -> Recommendation:
    results = [(r, f"runs/x#{r.result_id}") for r in recorded().results]
    (made,) = recommend_matrix(LOADED, GATES, results, objectives=(objective,))
    return made


def test_latency_picks_the_lowest_mean_among_eligible_rows() -> None:
    made = chosen(Objective.LATENCY)
    assert made.best is not None and made.best.row == ROWS["fast"]
    assert (made.best.recipe, made.best.state, made.best.limitation) == (
        "fast",
        CellState.VALIDATED,
        None,
    )
    assert made.best.figure.source == "perf:latency_mean"
    assert [c.row for c in made.ranked] == [ROWS["fast"], ROWS["middle"], ROWS["lean"]]
    # The evidence is the results the compiled state rests on, each linked.
    assert len(made.best.evidence) == len(BASELINE_GATES)
    assert all(ref.startswith("runs/x#r") for ref in made.best.evidence)
    assert made.best.figure.link in made.best.evidence


def test_throughput_picks_the_highest() -> None:
    made = chosen(Objective.THROUGHPUT)
    assert made.best is not None and made.best.row == ROWS["fast"]
    assert made.best.figure.source == "perf:throughput_qps"


def test_the_most_memory_constrained_row_is_named_on_its_own() -> None:
    made = chosen(Objective.LATENCY)
    assert made.memory_constrained is not None and made.memory_constrained.row == ROWS["lean"]
    best = chosen(Objective.MEMORY).best
    assert best is not None and best.row == ROWS["lean"]


def test_rows_without_the_evidence_are_listed_with_why() -> None:
    why = {n.row: n.why for n in chosen(Objective.LATENCY).not_eligible}
    assert set(why) == {ROWS["wrong"], ROWS["unsoaked"]}
    (wrong,) = why[ROWS["wrong"]]
    assert wrong.startswith("the compiled matrix has it not tested: reference-parity: latest "
                            "result failed")  # fmt: skip
    (unsoaked,) = why[ROWS["unsoaked"]]
    assert unsoaked == "the compiled matrix has it not tested: soak: no usable result"


def test_soak_figures_stand_in_for_a_benchmark_without_them() -> None:
    row = key(quantization="soaked")
    loaded = matrix(({"quantization": "soaked"}, RowSpec(requires=BASELINE_GATES)))
    record = Recorder()
    record.passes(row, BASELINE_GATES[:-2])
    record(row, "perf", latency_mean=0.4)  # no throughput measured
    record(row, "soak", saturation_rps=2.5)
    (made,) = recommend_matrix(loaded, GATES, [(r, "") for r in record.results],
                               objectives=(Objective.THROUGHPUT,))  # fmt: skip
    assert made.best is not None
    assert (made.best.figure.value, made.best.figure.source) == (2.5, "soak:saturation_rps")
    assert made.best.evidence == tuple(r.result_id for r in record.results)


def test_a_compiled_state_whose_results_were_not_given_is_not_trusted() -> None:
    record = recorded()
    compiled = compile_matrix(LOADED, GATES, (LocatedResult(r, "") for r in record.results))
    fast = [r for r in record.results if r.row == ROWS["fast"]]
    given = [(r, "") for r in record.results if r is not fast[0]]
    (made,) = recommend_matrix(LOADED, GATES, given, compiled=compiled,
                               objectives=(Objective.LATENCY,))  # fmt: skip
    assert made.best is not None and made.best.row == ROWS["middle"]
    why = {n.row: n.why for n in made.not_eligible}
    assert why[ROWS["fast"]] == (f"results its state rests on were not read: {fast[0].result_id}",)
