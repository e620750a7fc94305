"""A 100,000-row matrix renders as a small summary page linking one page per model group; a
small matrix stays the single page it always was."""

import re
from datetime import UTC, datetime
from pathlib import Path

from typer.testing import CliRunner

from omniqual.cli.main import app
from omniqual.cli.matrix import write_matrix_pages
from omniqual.domain.matrix import CompiledMatrix, CompiledRow, EvidenceRef
from omniqual.domain.outcomes import CellState
from omniqual.engine.matrix_service import write_json
from omniqual.report.matrix_pages import render_matrix_pages
from omniqual.report.render import render_matrix

STATES = tuple(CellState)


def synthetic(n_rows: int, models: int) -> CompiledMatrix:
    rows = []
    for i in range(n_rows):
        state = STATES[i % 4]
        evidence: tuple[EvidenceRef, ...] = ()
        if state is not CellState.NOT_TESTED:
            evidence = (EvidenceRef(run_id="run-1", result_id=f"{i:032x}", gate_id="soak",
                                    outcome="passed", artifacts=("a" * 64,),
                                    link=f"runs/run-1/journal.jsonl#{i:032x}"),)  # fmt: skip
        rows.append(CompiledRow(
            key=f"model=m{i % models};shape=s{i // models};hardware=cpu",
            axes={"model": f"m{i % models}", "shape": f"s{i // models}", "hardware": "cpu"},
            state=state, reasons=() if state is CellState.VALIDATED else ("soak: no result",),
            required_gates=("soak",), evidence=evidence, gate_outcomes={"soak": "passed"},
            limitation="only 5 frames" if state is CellState.LIMITED else None,
        ))  # fmt: skip
    rows.sort(key=lambda r: r.key)
    at = datetime(2026, 1, 1, tzinfo=UTC)
    axes = ("model", "shape", "hardware")
    return CompiledMatrix(name="big", title="A big matrix", axes=axes, compiled_at=at,
                          rows=tuple(rows))  # fmt: skip


def test_a_100k_row_matrix_has_a_small_summary_and_a_linked_page_per_group(
    tmp_path: Path,
) -> None:
    matrix = synthetic(100_000, models=40)
    written = write_matrix_pages(matrix, tmp_path / "matrix.html")
    summary = (tmp_path / "matrix.html").read_text(encoding="utf-8")
    assert len(summary.encode()) < 10_000_000
    pages = sorted((tmp_path / "matrix").glob("*.html"))
    assert set(written) == {tmp_path / "matrix.html", *pages}
    links = re.findall(r'<a href="(matrix/[^"]+)">', summary)
    assert sorted(tmp_path / link for link in links) == pages
    # Every model group has its pages, each within the page size, rows all accounted for.
    for model in range(40):
        assert any(f"model_m{model}_" in page.name for page in pages), model
    shown = 0
    for page in pages:
        html = page.read_text(encoding="utf-8")
        assert 'href="../matrix.html"' in html
        # Evidence links are relative to the summary's directory: one more step up from here.
        assert 'href="runs/' not in html
        shown += html.count('<tr id="row-')
    assert shown == 100_000
    assert "25000" in summary  # the state counts are on the summary
    assert 'href="../runs/run-1/journal.jsonl#' in pages[0].read_text(encoding="utf-8")


def test_a_small_matrix_is_the_single_page_it_always_was() -> None:
    matrix = synthetic(12, models=3)
    assert render_matrix_pages(matrix) == {Path("matrix.html"): render_matrix(matrix, "html")}


def test_matrix_render_writes_the_pages_with_page_rows(tmp_path: Path) -> None:
    compiled = tmp_path / "big.compiled.json"
    write_json(synthetic(30, models=3), compiled)
    runner = CliRunner()
    out = tmp_path / "site" / "matrix.html"
    result = runner.invoke(app, ["matrix", "render", str(compiled), "-f", "html", "-o", str(out),
                                 "--page-rows", "4"])  # fmt: skip
    assert result.exit_code == 0, result.output
    pages = sorted((tmp_path / "site" / "matrix").glob("*.html"))
    assert len(pages) == 3 * 3  # three models of ten rows, four rows a page
    assert "model=m0 (part 1 of 3)" in out.read_text(encoding="utf-8")
    # A second render with bigger pages leaves no page of the first one behind.
    result = runner.invoke(app, ["matrix", "render", str(compiled), "-f", "html", "-o", str(out),
                                 "--page-rows", "10"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert len(list((tmp_path / "site" / "matrix").glob("*.html"))) == 3
    # Without -o there is nowhere to put the pages: a readable usage error.
    result = runner.invoke(app, ["matrix", "render", str(compiled), "-f", "html",
                                 "--page-rows", "4"])  # fmt: skip
    assert result.exit_code == 2
    assert "give -o" in result.stderr
