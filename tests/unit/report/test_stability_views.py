"""The stability report: Markdown, HTML and JSON from one table."""

import json

from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.domain.verdict_stability import RunVerdicts, stability
from omniqual.report.stability_views import render_stability, stability_view

P, F, INV = GateOutcome.PASSED, GateOutcome.FAILED, GateOutcome.INVALID


def _table():  # type: ignore[no-untyped-def]
    return stability([
        RunVerdicts("run-1", {("soak", "model=x"): (P, "")}, {"model=x": CellState.VALIDATED}),
        RunVerdicts("run-2", {("soak", "model=x"): (F, "p95 4.1 s > 3 s")},
                    {"model=x": CellState.NOT_TESTED}),
    ])  # fmt: skip


def test_view_names_what_moved_with_the_reason_of_each_run() -> None:
    view = stability_view(_table())
    assert view.flips == 1 and view.agreement == "0%"
    (line,) = view.lines
    assert line.verdicts == ("passed", "failed") and line.agreed == "1/2"
    assert line.finding == "moved between passed and failed; run 2: p95 4.1 s > 3 s"
    assert view.unstable_rows == (("model=x", ("validated", "not tested")),)


def test_markdown_html_and_json_carry_the_table() -> None:
    md = render_stability(_table(), "md")
    assert "| soak | model=x | passed | failed | 1/2 |" in md
    assert "## Rows whose state changed" in md
    html = render_stability(_table(), "html")
    assert "<td>failed</td>" in html and "p95 4.1 s &gt; 3 s" in html
    record = json.loads(render_stability(_table(), "json"))
    assert record["schema_version"] == 2 and record["runs"] == ["run-1", "run-2"]
    assert record["lines"][0]["decided"] == "2/2" and record["decided"] == "2 of 2 (100%)"


def test_a_gate_never_decided_is_a_finding_and_its_invalid_verdicts_are_counted() -> None:
    table = stability([
        RunVerdicts("run-1", {("soak", "x"): (INV, "too few samples"), ("api", "x"): (P, "")},
                    {}, sessions=2),
        RunVerdicts("run-2", {("soak", "x"): (INV, "schedule fell behind"), ("api", "x"): (P, "")},
                    {}),
    ])  # fmt: skip
    view = stability_view(table)
    soak = next(line for line in view.lines if line.gate == "soak")
    assert soak.decided == "0/2" and soak.agreed == "2/2"
    assert soak.finding == ("never decided: invalid in every run; run 1: too few samples; "
                            "run 2: schedule fell behind")  # fmt: skip
    assert view.agreement == "50%" and view.never_decided == 1
    assert view.decided == "2 of 4 (50%)" and view.undecided == "2 invalid"
    assert view.run_labels == ("Run 1 (resumed)", "Run 2")
    assert view.named_runs == "run-1 (resumed: 2 sessions), run-2"
    md = render_stability(table, "md")
    assert "| Gate | Row | Run 1 (resumed) | Run 2 | Agreed | Decided | Finding |" in md
    assert "| soak | x | invalid | invalid | 2/2 | 0/2 | never decided" in md
    assert "2 of 4 (50%) verdicts decided (`passed` or `failed`), 2 invalid;" in md


def test_the_report_section_names_rows_by_their_labels() -> None:
    from omniqual.report.blocks import Table
    from omniqual.report.stability_views import stability_section

    section = stability_section(_table(), {"model=x": "#1 x"}, 12)
    assert section.number == 12 and not section.empty
    tables = [b for b in section.blocks if isinstance(b, Table)]
    assert [t.title for t in tables] == ["Rows whose state changed", "Gate verdicts per run"]
    assert tables[1].rows[0][:4] == ("soak", "#1 x", "passed", "failed")
