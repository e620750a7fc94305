"""The "Recommended deployment" section: the real selection over a compiled matrix and its
results, drawn after the findings and before the verdicts, with the recommended row's evidence
linked, the most memory-constrained eligible row, every ineligible row with why, and a `limited`
row never shown without its limitation."""

from collections.abc import Callable
from pathlib import Path

from omniqual.compile.matrix import LocatedResult, compile_matrix
from omniqual.compile.recommend import recommend_matrix
from omniqual.domain.matrix import CompiledMatrix, CompiledRow, LimitedSpec, LoadedMatrix, RowSpec
from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.domain.result import GateResult
from omniqual.report.render import render_run_report
from omniqual.report.run_views import RunEvidence, run_report_view
from tests.unit.compile.deployments import BASELINE_GATES, GATES, Recorder, key, matrix

BOUND = "1024x1024 only"


def _three() -> LoadedMatrix:
    return matrix(*(({"quantization": q}, RowSpec(requires=BASELINE_GATES, recipe=f"recipe-{q}"))
                    for q in ("a", "b", "c")))  # fmt: skip


def _evidence(loaded: LoadedMatrix, results: list[GateResult]) -> RunEvidence:
    compiled = compile_matrix(loaded, GATES, (LocatedResult(r, "") for r in results))
    chosen = recommend_matrix(loaded, GATES, ((r, "") for r in results), compiled=compiled)
    return RunEvidence(title="t", matrix=compiled, results=tuple(results),
                       artifact_dirs=(Path("ev") / "run-1" / "artifacts",),
                       report_dir=Path("out"), recommendations=chosen)  # fmt: skip


def test_eligible_rows_give_the_fastest_and_the_smallest() -> None:
    loaded = _three()
    record = Recorder()
    record.passes(key(quantization="a"), BASELINE_GATES, latency=0.5, qps=3.0, mib=9000.0)
    record.passes(key(quantization="b"), BASELINE_GATES, latency=0.9, qps=2.0, mib=4000.0)
    record(key(quantization="c"), "reference-parity", GateOutcome.FAILED)
    first = record.results[0].result_id
    perf = record.results[4].result_id
    evidence = _evidence(loaded, record.results)
    view = run_report_view(evidence).recommendation
    assert view is not None and view.best is not None and view.memory_constrained is not None
    assert (view.objective, view.eligible, view.considered) == ("latency", 2, 3)
    assert view.best.row == "#1" and view.best.recipe == "recipe-a"
    assert view.best.figure == "latency 0.5 s (perf:latency_mean)"
    assert view.best.limitation is None
    assert [e.text for e in view.best.evidence] == [f"{g} passed" for g in BASELINE_GATES]
    assert view.best.evidence[0].href == f"../ev/run-1/journal.jsonl#{first}"
    assert view.memory_constrained.row == "#2"
    assert view.memory_constrained.figure == "memory 4000 MiB (perf:peak_memory_mb_max)"
    (line,) = view.not_eligible
    assert line.startswith("#3: the compiled matrix has it not tested: reference-parity: latest "
                           "result failed")  # fmt: skip
    assert [(o.objective, o.best) for o in view.others] == [
        ("throughput", "#1: throughput 3 1/s (perf:throughput_qps)"),
        ("memory", "#2: memory 4000 MiB (perf:peak_memory_mb_max)"),
    ]

    md = render_run_report(evidence, "md-full")
    findings, recommended, verdicts = (md.index(h) for h in (
        "## Findings", "## Recommended deployment", "Per-gate verdicts"))  # fmt: skip
    assert findings < recommended < verdicts
    assert "- **Recommended:** row #1, recipe `recipe-a`, latency 0.5 s" in md
    assert "**limited:**" not in md
    assert f"[reference-parity passed](../ev/run-1/journal.jsonl#{first})" in md
    html = render_run_report(evidence, "html")
    assert '<h2 id="recommended-deployment">' in html
    assert f'<a href="../ev/run-1/journal.jsonl#{perf}">perf passed</a>' in html
    assert "<details><summary>Not eligible" not in html  # one line: not folded


def test_a_limited_row_is_recommended_with_its_limitation() -> None:
    loaded = matrix(({"quantization": "fp8"}, RowSpec(
        requires=(*BASELINE_GATES, "offload-sweep"), recipe="fp8",
        limited=LimitedSpec(limitation=BOUND, requires=BASELINE_GATES,
                            rejection=("api-contract",)))))  # fmt: skip
    record = Recorder()
    record.passes(key(quantization="fp8"), (*BASELINE_GATES, "api-contract"), latency=0.2)
    evidence = _evidence(loaded, record.results)
    assert evidence.matrix.rows[0].state is CellState.LIMITED
    view = run_report_view(evidence).recommendation
    assert view is not None and view.best is not None
    assert (view.best.row, view.best.limitation) == ("#1", BOUND)
    assert [(o.objective, o.best) for o in view.others] == [
        ("throughput", f"#1: throughput 2 1/s (perf:throughput_qps) (limited: {BOUND})"),
        ("memory", f"#1: memory 1000 MiB (perf:peak_memory_mb_max) (limited: {BOUND})"),
    ]
    md = render_run_report(evidence, "md-full")
    assert (
        f"- **Recommended:** row #1, recipe `fp8`, latency 0.2 s (perf:latency_mean); "
        f"**limited:** {BOUND}; evidence: "
    ) in md
    html = render_run_report(evidence, "html")
    assert f"(perf:latency_mean); <strong>limited:</strong> {BOUND}; evidence: " in html


def test_nothing_eligible_says_so_with_the_rows_considered() -> None:
    loaded = _three()
    record = Recorder()
    record(key(quantization="a"), "abort")
    evidence = _evidence(loaded, record.results)
    view = run_report_view(evidence).recommendation
    assert view is not None and view.best is None and view.memory_constrained is None
    assert (view.eligible, view.considered, len(view.not_eligible)) == (0, 3, 3)
    md = render_run_report(evidence, "md-full")
    assert "_None: no row is eligible for latency (3 rows considered)._" in md
    html = render_run_report(evidence, "html")
    assert "None: no row is eligible for latency (3 rows considered)." in html


def test_without_recommendations_the_section_is_left_out(
    make_row: Callable[..., CompiledRow], make_matrix: Callable[..., CompiledMatrix],
) -> None:  # fmt: skip
    evidence = RunEvidence(title="t", matrix=make_matrix(make_row(CellState.VALIDATED)))
    assert run_report_view(evidence).recommendation is None
    assert "Recommended deployment" not in render_run_report(evidence, "md-full")
