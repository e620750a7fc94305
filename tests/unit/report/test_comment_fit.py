"""Fitting the Markdown report into a PR comment: the ladder is deterministic, every cut is
counted against the full table, and the last resort still stays within the limit."""

from collections.abc import Callable

from omniqual.domain.evidence import CaseResult
from omniqual.domain.matrix import CompiledMatrix, CompiledRow
from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.domain.result import GateResult
from omniqual.report.blocks import Table
from omniqual.report.comment_fit import LADDER, degrade, fit
from omniqual.report.run_views import RunEvidence, RunReportView, run_report_view
from omniqual.report.templates import render_template


def _view(
    make_row: Callable[..., CompiledRow],
    make_matrix: Callable[..., CompiledMatrix],
    make_result: Callable[..., GateResult],
) -> RunReportView:
    cases = tuple(
        CaseResult(id=f"case-{i}", endpoint="/v1/images/generations", field="size", sent=str(i),
                   expected_status="400", observed_status="400", outcome=GateOutcome.PASSED)
        for i in range(120)
    )  # fmt: skip
    matrix = make_matrix(make_row(CellState.VALIDATED))
    result = make_result("contract", "api_contract", cases=cases)
    return run_report_view(RunEvidence("t", matrix, results=(result,), full_report="r.html"))


def _render(view: RunReportView) -> str:
    return render_template("run.md.j2", None, view=view, images={})


def test_every_rung_counts_against_the_full_table(
    make_row: Callable[..., CompiledRow],
    make_matrix: Callable[..., CompiledMatrix],
    make_result: Callable[..., GateResult],
) -> None:
    view = _view(make_row, make_matrix, make_result)
    for level in (rung for rung in LADDER if rung.blocks is None and rung.contents):
        cut = degrade(view, level, "r.html")
        cases = next(b for s in cut.sections for b in s.blocks if b.title == "Cases")
        assert isinstance(cases, Table) and level.table_rows is not None
        assert len(cases.rows) == level.table_rows == len(cases.links)
        assert cases.note == f"{level.table_rows} of 120 rows shown; the full table is in r.html"
        assert cut.trimmed and all("r.html" in note for note in cut.trimmed if "(" in note)


def test_fit_leaves_a_small_report_alone_and_cuts_a_large_one_to_the_limit(
    make_row: Callable[..., CompiledRow],
    make_matrix: Callable[..., CompiledMatrix],
    make_result: Callable[..., GateResult],
) -> None:
    view = _view(make_row, make_matrix, make_result)
    full = _render(view)
    assert fit(view, _render, limit=len(full)) == full
    for limit in (len(full) // 2, 6000, 1500):
        text = fit(view, _render, limit=limit)
        assert len(text) <= limit
        assert "Trimmed to fit a PR comment" in text or "Cut at" in text
        assert text == fit(view, _render, limit=limit)  # deterministic
    assert fit(view, _render, limit=1500).endswith(
        "> Cut at 1500 characters; the full report is r.html.\n"
    )
