"""The run report's "Skill rules covered" block: the skill's rules counted per group and status,
what this report's results decided on its rows (a gate's latest result passed or failed), the
ids of the rules they did not, and every rule in a folded HTML table."""

import re
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from omniqual.domain.matrix import CompiledMatrix
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.result import GateResult
from omniqual.domain.skill_rules import CaseRegistry, RuleCatalogue, RuleGroupFile
from omniqual.report.render import render_run_report
from omniqual.report.run_views import RunEvidence, run_report_view
from omniqual.report.skill_rules_view import skill_rules_view
from omniqual.specs.gates import load_gates
from omniqual.specs.matrix import load_catalog
from omniqual.specs.project import find_project
from omniqual.specs.rules import load_rule_catalogue, rules_dir
from tests.unit.report.conftest import T0

ROOT = Path(__file__).resolve().parents[3]


def _rule(id_: str, status: str, **fields: object) -> dict[str, object]:
    return {"id": id_, "statement": f"statement of {id_}", "mode": "automatic", "source": "S1",
            "status": status, **fields}  # fmt: skip


def _gate(gate: str) -> list[dict[str, str]]:
    return [{"gate": gate, "case": "c"}]


CATALOGUE = RuleCatalogue(
    (
        RuleGroupFile.model_validate({"group": "G0", "title": "Gate 0", "rules": [
            _rule("G0-01", "decided", decided_by=_gate("g1")),
            _rule("G0-02", "partial", decided_by=_gate("soak"), missing="the long soak"),
            _rule("G0-03", "missing", reason="no check counts process groups"),
        ]}),
        RuleGroupFile.model_validate({"group": "EV", "title": "Evidence", "rules": [
            _rule("EV-01", "decided",
                  decided_by=[{"compile_rule": "omniqual.compile.matrix:compile_matrix"}]),
            _rule("EV-02", "human", decided_by=_gate("abort"), missing="a reviewer reads it",
                  statement="a <script>alert(1)</script> & a | pipe"),
            _rule("EV-03", "out_of_scope", reason="the skill's own tooling"),
        ]}),
    ),
    CaseRegistry(kinds={}),
)  # fmt: skip


def _results(make_result: Callable[..., GateResult], row: str) -> tuple[GateResult, ...]:
    at = T0 + timedelta(minutes=5)
    return (
        make_result("g1", result_id="pass", row=row),
        # soak passed first, then was invalid: the latest decides nothing, the pass no longer counts
        make_result("soak", kind="soak", result_id="soak-1", row=row),
        make_result("soak", kind="soak", result_id="soak-2", row=row,
                    outcome=GateOutcome.INVALID, started_at=at, finished_at=at),
    )  # fmt: skip


def _evidence(matrix: CompiledMatrix, results: tuple[GateResult, ...]) -> RunEvidence:
    return RunEvidence(title="t", matrix=matrix, results=results, rules=CATALOGUE,
                       full_report="report.html")  # fmt: skip


def test_counts_per_group_and_status_and_what_this_runs_results_decided(
    every_state_matrix: CompiledMatrix, make_result: Callable[..., GateResult]
) -> None:
    row = every_state_matrix.rows[1].key
    view = run_report_view(_evidence(every_state_matrix, _results(make_result, row))).skill_rules
    assert view is not None
    assert view.statuses == ("decided", "partial", "human", "missing", "out_of_scope")
    assert [(g.group, g.total, g.counts) for g in view.groups] == [
        ("G0", 3, (1, 1, 0, 1, 0)), ("EV", 3, (1, 0, 1, 0, 1)),
    ]  # fmt: skip
    assert (view.total, view.totals) == (6, (2, 1, 1, 1, 1))
    assert view.rows == ("#2",)
    assert (view.by_results, view.by_compile) == (1, 1)
    assert [r.id for r in view.not_decided] == ["G0-02", "EV-02"]
    assert [r.id for r in view.undecidable] == ["G0-03", "EV-03"]
    here = {line.id: line.here for line in view.lines}
    assert here["G0-01"] == "decided on #2 (g1 passed)"
    assert here["G0-02"] == "not decided on #2 (soak invalid)"
    assert here["EV-02"] == "not decided on #2 (no result of abort on this row)"
    assert here["EV-01"] == "decided by the compile (no gate involved)"
    assert here["G0-03"] == "nothing decides it (missing)"
    gaps = {line.id: line.gap for line in view.lines}
    assert gaps["G0-02"] == "the long soak" and gaps["EV-03"] == "the skill's own tooling"


def test_without_results_on_its_rows_the_run_decided_nothing(
    every_state_matrix: CompiledMatrix, make_result: Callable[..., GateResult]
) -> None:
    outside = "model=other;task=t2i;quantization=q9;hardware=h200"
    view = run_report_view(_evidence(every_state_matrix, _results(make_result, outside)))
    rules = view.skill_rules
    assert rules is not None and rules.rows == ()
    assert (rules.by_results, rules.by_compile) == (0, 0)
    assert [r.id for r in rules.not_decided] == ["G0-01", "G0-02", "EV-01", "EV-02"]
    md = render_run_report(_evidence(every_state_matrix, ()), "md")
    assert "No result on this matrix's rows: this report's results decided none of the rules." in md


def test_markdown_lists_the_undecided_ids_and_points_at_the_html_table(
    every_state_matrix: CompiledMatrix, make_result: Callable[..., GateResult]
) -> None:
    row = every_state_matrix.rows[1].key
    md = render_run_report(_evidence(every_state_matrix, _results(make_result, row)), "md")
    block = md[md.index("## Skill rules covered") : md.index("## Runs and gates")]
    assert "| G0 · Gate 0 | 3 | 1 | 1 | 0 | 1 | 0 |" in block
    assert "| total | 6 | 2 | 1 | 1 | 1 | 1 |" in block
    assert "**1** rule(s) decided by those results" in block
    assert "- Not decided by the results in this report (2): G0-02, EV-02" in block
    assert "missing or out of scope (2): G0-03, EV-03" in block
    assert "[the HTML report](report.html#skill-rules)" in block
    # The full table (statements) is the HTML report's only.
    assert "statement of" not in md


def test_html_links_each_undecided_id_to_its_row_of_the_folded_full_table(
    every_state_matrix: CompiledMatrix, make_result: Callable[..., GateResult]
) -> None:
    row = every_state_matrix.rows[1].key
    html = render_run_report(_evidence(every_state_matrix, _results(make_result, row)), "html")
    assert '<a href="#rule-G0-02">G0-02</a>, <a href="#rule-EV-02">EV-02</a>' in html
    table = html[html.index('<details id="skill-rules">') :]
    table = table[: table.index("</details>")]
    assert re.findall(r'<tr id="(rule-[^"]+)">', table) == [
        "rule-G0-01", "rule-G0-02", "rule-G0-03", "rule-EV-01", "rule-EV-02", "rule-EV-03",
    ]  # fmt: skip
    assert "<script>" not in html
    assert "a &lt;script&gt;alert(1)&lt;/script&gt; &amp; a | pipe" in table
    assert "<td>decided on #2 (g1 passed)</td>" in table


def test_without_a_catalogue_the_block_is_left_out(every_state_matrix: CompiledMatrix) -> None:
    evidence = RunEvidence(title="t", matrix=every_state_matrix)
    assert run_report_view(evidence).skill_rules is None
    for fmt in ("md", "html", "step-summary"):
        assert "Skill rules covered" not in render_run_report(evidence, fmt)  # type: ignore[arg-type]


def test_the_shipped_catalogue_counts_every_rule_of_the_skill() -> None:
    project = find_project(ROOT)
    gates = load_gates(project.gates, load_catalog(project.axes_file), project.root)
    kinds = {gate_id: gate.spec.kind for gate_id, gate in gates.items()}
    catalogue = load_rule_catalogue(rules_dir(project.gates), kinds)
    view = skill_rules_view(catalogue, (), {})
    assert view.total == sum(view.totals) == len(view.lines) == len(catalogue.rules) > 0
    assert [g.group for g in view.groups] == [g.group for g in catalogue.groups]
    # Without results nothing is decided by them: every rule is listed, in one list or the other.
    assert len(view.not_decided) + len(view.undecidable) == view.total
