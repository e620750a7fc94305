"""The run evidence report: ten checklist sections, explicit gaps, routing, redaction."""

import json
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from omniqual.domain.evidence import Artifact, CaseResult, Measurement
from omniqual.domain.matrix import CompiledMatrix, CompiledRow
from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.domain.result import GateResult
from omniqual.domain.run import EnvironmentFingerprint, RunSummary
from omniqual.report.blocks import NO_EVIDENCE, Table
from omniqual.report.render import render_run_report
from omniqual.report.run_views import RunEvidence, run_report_view

PROMPT = "a lighthouse at dusk, photorealistic"
B64 = "iVBORw0KGgoAAAANSUhEUgAA" + "Q" * 400


IN_MATRIX = "model=flux;task=t2i;quantization=q0;hardware=h200"
"""The first row of ``every_state_matrix``: the report covers the matrix's rows only."""


@pytest.fixture
def make_result(make_result: Callable[..., GateResult]) -> Callable[..., GateResult]:
    def on_row(*args: object, **fields: object) -> GateResult:
        return make_result(*args, **{"row": IN_MATRIX, **fields})

    return on_row


def _run(results: tuple[GateResult, ...]) -> RunSummary:
    at = datetime(2025, 1, 2, tzinfo=UTC)
    env = EnvironmentFingerprint(
        hostname_hash="0" * 64, os="Linux", kernel="6", machine="x86_64", cpu_model="cpu",
        cpu_count=2, memory_total_bytes=1 << 30, python="3.11", omniqual_version="0.1.0",
    )  # fmt: skip
    return RunSummary(
        run_id="run-1", started_at=at, finished_at=at, status="completed",
        command=("omniqual", "run", "--prompt", PROMPT), environment=env, results=results,
    )  # fmt: skip


def test_an_empty_run_says_no_evidence_in_every_section(
    every_state_matrix: CompiledMatrix,
) -> None:
    view = run_report_view(RunEvidence(title="t", matrix=every_state_matrix))
    assert [s.number for s in view.sections] == list(range(1, 11))
    empty = {s.number for s in view.sections if s.empty}
    # Section 4 holds each row's recipe (what is not recorded says so) and 9 the CI tracks
    # (gate g1, of unknown kind, required and never run).
    assert empty == {1, 3, 5, 6, 7, 8}
    for section in view.sections:
        if section.empty:  # says what is missing and what would fill it
            assert section.empty_note.startswith(NO_EVIDENCE)
            assert "gate" in section.empty_note
    for fmt in ("md", "html"):
        text = render_run_report(RunEvidence(title="t", matrix=every_state_matrix), fmt)
        assert text.count(NO_EVIDENCE) >= len(empty)
        for section in view.sections:
            assert section.title.split(" (")[0] in text


def test_sections_route_results_by_check_kind(
    every_state_matrix: CompiledMatrix, make_result: Callable[..., GateResult]
) -> None:
    results = (
        make_result("contract", "api_contract", cases=(
            CaseResult(id="c1", endpoint="/v1/images/generations", expected_status="400",
                       observed_status="422", outcome=GateOutcome.PASSED, deviation=True),
        )),
        make_result("perf", "load", measurements=(
            Measurement(name="latency_p95", value=1234.5, unit="ms", samples=200),
        )),
        make_result("abort", "abort"),
        make_result("mystery", "brand_new_kind"),
    )  # fmt: skip
    view = run_report_view(RunEvidence(title="t", matrix=every_state_matrix, results=results))
    by_number = {s.number: s for s in view.sections}

    def gates(number: int) -> set[str]:
        table = next(b for b in by_number[number].blocks if b.title == "Gate results")
        assert isinstance(table, Table)
        return {row[0] for row in table.rows}

    assert gates(1) == {"contract"}
    assert gates(6) == {"perf"}
    assert gates(8) == {"abort"}
    assert gates(11) == {"mystery"}
    assert by_number[7].empty
    perf = next(b for b in by_number[6].blocks if b.title == "Measurements")
    assert isinstance(perf, Table)
    assert perf.rows[0][2:6] == ("latency_p95", "1234.5", "ms", "200")
    deviations = next(b for b in by_number[1].blocks if "deviations" in b.title)
    assert "expected 400, observed 422" in str(deviations)


def test_limitations_list_every_non_validated_row(every_state_matrix: CompiledMatrix) -> None:
    view = run_report_view(RunEvidence(title="t", matrix=every_state_matrix))
    limits = next(s for s in view.sections if s.number == 10)
    (table,) = limits.blocks
    assert isinstance(table, Table)
    assert [(row[2], row[3]) for row in table.rows] == [
        ("limited", "why limited"),
        ("unsupported", "why unsupported"),
        ("not tested", "why not tested"),
    ]


def test_all_validated_matrix_says_so_under_limitations(
    make_row: Callable[..., CompiledRow], make_matrix: Callable[..., CompiledMatrix]
) -> None:
    view = run_report_view(
        RunEvidence(title="t", matrix=make_matrix(make_row(CellState.VALIDATED)))
    )
    limits = next(s for s in view.sections if s.number == 10)
    assert limits.empty and "every row in the matrix is validated" in limits.empty_note


def test_results_are_deduplicated_and_gates_tallied(
    every_state_matrix: CompiledMatrix, make_result: Callable[..., GateResult]
) -> None:
    passed = make_result("g1")
    failed = make_result("g2", outcome=GateOutcome.FAILED)
    evidence = RunEvidence(
        title="t", matrix=every_state_matrix, runs=(_run((passed, failed)),), results=(passed,)
    )
    assert len(evidence.all_results()) == 2
    view = run_report_view(evidence)
    assert dict(view.outcome_counts)["passed"] == 1
    assert dict(view.outcome_counts)["failed"] == 1
    assert view.gates_closed == ("g1",)
    assert view.gates_open == ("g2",)


@pytest.mark.parametrize("fmt", ["md", "html", "json"])
def test_prompts_and_base64_never_reach_the_report(
    every_state_matrix: CompiledMatrix, make_result: Callable[..., GateResult], fmt: str
) -> None:
    result = make_result(
        "g1",
        command=("omniqual", "gate", "--prompt", PROMPT),
        requested={"prompt": PROMPT, "steps": 4, "extra": {"b64_json": B64}},
        effective={"steps": 4, "echo": B64},
        reasons=(f"server echoed {B64}",),
        artifacts=(Artifact(sha256="e" * 64, size=10, media_type="image/png",
                            role="output-image", name="out.png"),),
    )  # fmt: skip
    evidence = RunEvidence(title="t", matrix=every_state_matrix, runs=(_run((result,)),))
    text = render_run_report(evidence, fmt)  # type: ignore[arg-type]
    assert PROMPT not in text
    assert "Q" * 100 not in text
    assert "e" * 64 in text
    if fmt == "json":
        data = json.loads(text)
        assert [s["number"] for s in data["sections"]] == list(range(1, 11))
