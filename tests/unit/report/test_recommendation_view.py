"""The "Recommended deployment" section: the real selection over a compiled matrix and its
results, drawn after the findings and before the verdicts, with the recommended row's evidence
linked, the most memory-constrained passing row, and every ineligible row with why."""

from collections.abc import Callable
from pathlib import Path

from omniqual.compile.recommend import Objective, facts_from_results, recommend
from omniqual.domain.evidence import Measurement
from omniqual.domain.matrix import CompiledMatrix, CompiledRow
from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.domain.recommendation import Recommendation
from omniqual.domain.result import GateResult
from omniqual.report.render import render_run_report
from omniqual.report.run_views import RunEvidence, run_report_view

GATES = (("parity", "candidate_parity"), ("abort", "abort"), ("soak", "soak"))


def _passing(make_result: Callable[..., GateResult], row: str, n: int, latency: float,
             mib: float) -> list[GateResult]:  # fmt: skip
    made = [make_result(g, kind, result_id=f"{g}-{n}", row=row) for g, kind in GATES]
    perf = (Measurement(name="latency_mean", value=latency, unit="s"),
            Measurement(name="peak_memory_mb_max", value=mib, unit="MiB"))  # fmt: skip
    return [*made, make_result("perf", "perf", result_id=f"perf-{n}", row=row, measurements=perf)]


def _chosen(matrix: CompiledMatrix, results: list[GateResult]) -> tuple[Recommendation, ...]:
    rows = {row.key: (f"recipe-{i}", ()) for i, row in enumerate(matrix.rows)}
    facts = facts_from_results(((r, "") for r in results), rows)
    return tuple(recommend(facts, objective) for objective in Objective)


def _evidence(matrix: CompiledMatrix, results: list[GateResult]) -> RunEvidence:
    return RunEvidence(title="t", matrix=matrix, results=tuple(results),
                       artifact_dirs=(Path("ev") / "run-1" / "artifacts",),
                       report_dir=Path("out"),
                       recommendations=_chosen(matrix, results))  # fmt: skip


def _three(make_row: Callable[..., CompiledRow],
           make_matrix: Callable[..., CompiledMatrix]) -> CompiledMatrix:  # fmt: skip
    return make_matrix(*(make_row(CellState.VALIDATED, axes={"quantization": q})
                         for q in ("bf16", "fp8", "int4")))  # fmt: skip


def test_eligible_rows_give_the_fastest_and_the_smallest(
    make_row: Callable[..., CompiledRow], make_matrix: Callable[..., CompiledMatrix],
    make_result: Callable[..., GateResult],
) -> None:  # fmt: skip
    matrix = _three(make_row, make_matrix)
    fast, small, broken = (row.key for row in matrix.rows)
    results = [*_passing(make_result, fast, 0, 0.5, 9000.0),
               *_passing(make_result, small, 1, 0.9, 4000.0),
               make_result("parity", "candidate_parity", result_id="parity-2", row=broken,
                           outcome=GateOutcome.FAILED)]  # fmt: skip
    view = run_report_view(_evidence(matrix, results)).recommendation
    assert view is not None and view.best is not None and view.memory_constrained is not None
    assert (view.objective, view.eligible, view.considered) == ("latency", 2, 3)
    assert view.best.row == "#1" and view.best.recipe == "recipe-0"
    assert view.best.figure == "latency 0.5 s (perf:latency_mean)"
    assert [e.text for e in view.best.evidence] == [
        "parity passed", "abort passed", "soak passed", "perf passed"]
    assert view.best.evidence[0].href == "../ev/run-1/journal.jsonl#parity-0"
    assert view.memory_constrained.row == "#2"
    assert view.memory_constrained.figure == "memory 4000 MiB (perf:peak_memory_mb_max)"
    (line,) = view.not_eligible
    assert line.startswith("#3: correctness: parity failed; abort/error cleanup: no result")
    assert [(o.objective, o.best) for o in view.others] == [
        ("throughput", "none eligible of 3 rows"),
        ("memory", "#2: memory 4000 MiB (perf:peak_memory_mb_max)")]

    md = render_run_report(_evidence(matrix, results), "md-full")
    findings, recommended, verdicts = (md.index(h) for h in (
        "## Findings", "## Recommended deployment", "Per-gate verdicts"))  # fmt: skip
    assert findings < recommended < verdicts
    assert "- **Recommended:** row #1, recipe `recipe-0`" in md
    assert "[parity passed](../ev/run-1/journal.jsonl#parity-0)" in md
    html = render_run_report(_evidence(matrix, results), "html")
    assert '<h2 id="recommended-deployment">' in html
    assert '<a href="../ev/run-1/journal.jsonl#perf-0">perf passed</a>' in html
    assert "<details><summary>Not eligible" not in html  # one line: not folded


def test_nothing_eligible_says_so_with_the_rows_considered(
    make_row: Callable[..., CompiledRow], make_matrix: Callable[..., CompiledMatrix],
    make_result: Callable[..., GateResult],
) -> None:  # fmt: skip
    matrix = _three(make_row, make_matrix)
    results = [make_result("abort", "abort", result_id="a", row=matrix.rows[0].key)]
    view = run_report_view(_evidence(matrix, results)).recommendation
    assert view is not None and view.best is None and view.memory_constrained is None
    assert (view.eligible, view.considered, len(view.not_eligible)) == (0, 3, 3)
    md = render_run_report(_evidence(matrix, results), "md-full")
    assert "_None: no row is eligible for latency (3 rows considered)._" in md
    html = render_run_report(_evidence(matrix, results), "html")
    assert "None: no row is eligible for latency (3 rows considered)." in html


def test_without_recommendations_the_section_is_left_out(
    make_row: Callable[..., CompiledRow], make_matrix: Callable[..., CompiledMatrix],
) -> None:  # fmt: skip
    evidence = RunEvidence(title="t", matrix=_three(make_row, make_matrix))
    assert run_report_view(evidence).recommendation is None
    assert "Recommended deployment" not in render_run_report(evidence, "md-full")
