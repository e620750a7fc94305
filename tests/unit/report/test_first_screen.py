"""The first screen of a report: states and coverage, findings from the records, the support
claims slot; then verdicts whose cells stay short, and evidence shared by rows shown once."""

import re
from collections.abc import Callable

import pytest

from omniqual.domain.evidence import CaseResult, ErrorInfo
from omniqual.domain.matrix import CompiledMatrix, CompiledRow
from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.domain.result import GateResult
from omniqual.report.findings import matrix_findings
from omniqual.report.render import render_matrix, render_run_report
from omniqual.report.run_views import RunEvidence, run_report_view
from omniqual.report.support_claims_view import SupportClaimsView
from omniqual.report.views import matrix_view

FALLBACK = "fp8: silent fallback, 0 layers quantized, outputs identical"


def _key(i: int) -> str:
    return f"model=flux;task=t2i;quantization=q{i};hardware=h200"


def _evidence(matrix: CompiledMatrix, *results: GateResult, **fields: object) -> RunEvidence:
    return RunEvidence(title="t", matrix=matrix, results=results, **fields)  # type: ignore[arg-type]


def _recorded(make_result: Callable[..., GateResult]) -> tuple[GateResult, ...]:
    error = ErrorInfo(type="ConnectError", message="server went away")
    return (
        make_result("fp8", result_id="r1", row=_key(0), outcome=GateOutcome.FAILED,
                    reasons=(FALLBACK,)),
        make_result("contract", kind="api_contract", result_id="r2", row=_key(1),
                    limitations=("n=0 answered 422",)),
        make_result("soak", kind="soak", result_id="r3", row=_key(2), outcome=GateOutcome.INVALID,
                    reasons=("schedule fell behind by 12 %",)),
        make_result("abort", kind="abort", result_id="r4", row=_key(3),
                    outcome=GateOutcome.ERRORED, error=error),
        make_result("ok", result_id="r5", row=_key(3)),
    )  # fmt: skip


def test_findings_are_every_failure_limitation_and_invalid_gate_as_recorded(
    every_state_matrix: CompiledMatrix, make_result: Callable[..., GateResult]
) -> None:
    evidence = _evidence(every_state_matrix, *_recorded(make_result))
    found = run_report_view(evidence).findings
    assert [(f.kind, f.gate, f.text, [r.label for r in f.rows]) for f in found] == [
        ("failed", "fp8", FALLBACK, ["#1"]),
        ("limitation", "contract", "n=0 answered 422", ["#2"]),
        ("invalid", "soak", "schedule fell behind by 12 %", ["#3"]),
        ("errored", "abort", "ConnectError: server went away", ["#4"]),
    ]
    assert all(r.anchor == f"row-{r.label[1:]}" for f in found for r in f.rows)
    # No run directory is known here: no record link is made up, and the report says so.
    assert all(f.link == "" for f in found)
    assert "no record located" in render_run_report(evidence, "html")
    md = render_run_report(evidence, "md")
    assert f"- **failed** · fp8 on #1: {FALLBACK}" in md
    assert "- **errored** · abort on #4: ConnectError: server went away" in md


def test_a_finding_several_rows_share_is_one_line_naming_them(
    every_state_matrix: CompiledMatrix, make_result: Callable[..., GateResult]
) -> None:
    same = [
        make_result("fp8", result_id=f"r{i}", row=_key(i), outcome=GateOutcome.FAILED,
                    reasons=(FALLBACK,))
        for i in (0, 2, 3)
    ]  # fmt: skip
    (finding,) = run_report_view(_evidence(every_state_matrix, *same)).findings
    assert [r.label for r in finding.rows] == ["#1", "#3", "#4"]
    assert finding.line == f"fp8 on #1, #3, #4: failed: {FALLBACK}"


def test_no_findings_says_so(every_state_matrix: CompiledMatrix) -> None:
    md = render_run_report(_evidence(every_state_matrix), "md")
    assert "## Findings (0)" in md and "_None: no gate failed" in md


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_states_coverage_and_findings_come_before_the_rest(
    every_state_matrix: CompiledMatrix, make_result: Callable[..., GateResult], fmt: str
) -> None:
    text = render_run_report(_evidence(every_state_matrix, *_recorded(make_result)), fmt)  # type: ignore[arg-type]
    order = [
        "States", "Coverage map", "Findings (4)", "Per-gate verdicts",
        "1. Official revisions", "2. Scoped feature", "10. Limitations",
    ]  # fmt: skip
    at = [text.index(heading) for heading in order]
    assert at == sorted(at)
    assert "Support claims" not in text  # no support claims given: no section, no heading


def _claims() -> SupportClaimsView:
    return SupportClaimsView(
        markdown_table="| Feature | Claim |\n|---|---|\n| fp8 | supported |",
        html_headers=("Feature", "Claim"),
        html_rows=(("fp8", "<b>supported</b>"),),
        contradictions=("fp8: claimed supported, but 0 layers were quantized",),
    )


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_support_claims_follow_the_findings_contradictions_first(
    every_state_matrix: CompiledMatrix, make_result: Callable[..., GateResult], fmt: str
) -> None:
    evidence = _evidence(every_state_matrix, *_recorded(make_result), support_claims=_claims())
    text = render_run_report(evidence, fmt)  # type: ignore[arg-type]
    contradiction = text.index("fp8: claimed supported, but 0 layers were quantized")
    table = text.index("| fp8 | supported |" if fmt == "md" else "<td>fp8</td>")
    assert (
        text.index("Findings (4)") < text.index("Support claims") < contradiction < table
        < text.index("Per-gate verdicts")
    )  # fmt: skip
    if fmt == "html":
        assert "&lt;b&gt;supported&lt;/b&gt;" in text and "<b>supported</b>" not in text


def test_support_claims_rows_must_match_their_headers() -> None:
    with pytest.raises(ValueError, match="does not match the headers"):
        SupportClaimsView("", ("a", "b"), (("only one",),))


def test_a_verdict_with_many_deviations_keeps_a_short_cell_and_folds_the_list(
    every_state_matrix: CompiledMatrix, make_result: Callable[..., GateResult]
) -> None:
    reasons = tuple(f"declared deviation: case-{n}: observed 422, expected 400" for n in range(30))
    shared = [make_result("contract", kind="api_contract", result_id=f"r{i}", row=_key(i),
                          reasons=reasons) for i in (0, 1)]  # fmt: skip
    view = run_report_view(_evidence(every_state_matrix, *shared))
    cells = [row[3] for row in view.verdicts.rows]
    assert all(len(c) < 150 and c.startswith("30 reasons (30 declared deviations)") for c in cells)
    # Each reason once, naming both rows that gave it.
    assert [(gate, rows) for gate, rows, _ in view.verdict_reasons.rows] == [
        ("contract", "#1, #2")
    ] * 30
    html = render_run_report(_evidence(every_state_matrix, *shared), "html")
    folded = re.search(r"<details><summary>Reasons behind the verdicts.*?</details>", html, re.S)
    assert folded and all(f"case-{n}:" in folded.group(0) for n in range(30))
    assert "case-29" not in html[: folded.start()]


def test_contract_evidence_rows_share_is_shown_once_naming_them(
    every_state_matrix: CompiledMatrix, make_result: Callable[..., GateResult]
) -> None:
    cases = tuple(
        CaseResult.model_validate({
            "id": f"c{n}", "endpoint": "images-generations", "field": "n", "sent": f"n={n}",
            "expected_status": "400", "observed_status": "400", "outcome": GateOutcome.PASSED,
        })
        for n in (0, 5)
    )  # fmt: skip
    results = [make_result("contract", kind="api_contract", result_id=f"r{i}", row=_key(i),
                           cases=cases) for i in (0, 2, 3)]  # fmt: skip
    contract = run_report_view(_evidence(every_state_matrix, *results)).sections[0]
    tables = {b.title: b for b in contract.blocks}
    limits = tables["Contract table: limits accepted and rejected"]
    assert [row[:2] for row in limits.rows] == [("contract", "#1, #3, #4")]  # type: ignore[union-attr]
    assert [row[1:3] for row in tables["Cases"].rows] == [
        ("#1, #3, #4", "c0"),
        ("#1, #3, #4", "c5"),
    ]  # type: ignore[union-attr]


def test_matrix_findings_come_from_the_rows(
    make_row: Callable[..., CompiledRow], make_matrix: Callable[..., CompiledMatrix]
) -> None:
    failed = make_row(CellState.NOT_TESTED, axes={"quantization": "fp8"},
                      reasons=(f"g1: latest result failed ({FALLBACK})",),
                      gate_outcomes={"g1": "failed"})  # fmt: skip
    limited = make_row(CellState.LIMITED, axes={"quantization": "int8"},
                       limitation="1024x1024 only")  # fmt: skip
    matrix = make_matrix(failed, limited, make_row(CellState.VALIDATED))
    found = matrix_findings(matrix, matrix_view(matrix))
    assert [f.line for f in found] == [
        f"g1 on #1: failed: latest result failed ({FALLBACK})",
        "#2: limitation: 1024x1024 only",
    ]
    assert found[1].link == "#row-2"
    md = render_matrix(matrix, "md")
    assert md.index("## States") < md.index("Coverage map") < md.index("## Findings (2)")
    assert md.index("## Findings (2)") < md.index("## Matrix")
