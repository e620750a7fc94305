"""The run evidence report: a matrix plus run records, laid out as the ten-section PR checklist.

``RunEvidence`` is the renderer's whole input (domain records only); ``run_report_view`` turns it
into sections of plain strings. Results are routed to checklist sections by check kind; a kind
the routing table does not know lands in a trailing "other gate evidence" section, never nowhere.
"""

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from omniqual.domain.matrix import CompiledMatrix
from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.domain.result import GateResult
from omniqual.domain.run import RunSummary
from omniqual.report.blocks import NO_EVIDENCE, Block, Bullets, Section, Table, non_empty
from omniqual.report.evidence_blocks import (
    RowLabels,
    artifact_table,
    case_table,
    environment_blocks,
    measurement_table,
    parameter_table,
    result_table,
    revision_table,
    row_label,
    serve_command_table,
)
from omniqual.report.parity_views import parity_blocks
from omniqual.report.redact import safe_command, safe_text
from omniqual.report.sweep_views import sweep_blocks
from omniqual.report.views import MatrixView, matrix_view

SECTION_BY_KIND: Mapping[str, str] = {
    # Built-in check kinds (omniqual.checks.registry.BUILTIN).
    "api_contract": "contract",
    "fails_fast": "contract",
    "strict_load": "accuracy",
    "soak": "performance",
    "abort": "fault",
    "candidate_parity": "accuracy",
    "reference_parity": "accuracy",
    # Kinds the architecture plans; listed so their results land in the right section.
    "parity": "accuracy",
    "fp8_parity": "accuracy",
    "quality": "accuracy",
    "load": "performance",
    "benchmark": "performance",
    "offload_sweep": "performance",
    "output_contract": "output",
    "transport": "output",
    "abort_fault": "fault",
    "fault_injection": "fault",
}
"""Check kind → checklist section; extend it when a new check kind is added."""


@dataclass(frozen=True, slots=True)
class RunEvidence:
    """Everything a run evidence report is drawn from."""

    title: str
    matrix: CompiledMatrix
    runs: tuple[RunSummary, ...] = ()
    results: tuple[GateResult, ...] = ()
    """Results not inside ``runs`` (duplicates of run results are ignored)."""
    scope: str = ""
    """One line saying what this evidence covers (e.g. the task and hardware in scope)."""
    artifact_dirs: tuple[Path, ...] = ()
    """Content-addressed artifact directories (``<run>/artifacts``): the HTML report embeds the
    parity pictures it finds there, rehashed."""

    def all_results(self) -> tuple[GateResult, ...]:
        seen: dict[str, GateResult] = {}
        for result in (*(r for run in self.runs for r in run.results), *self.results):
            seen.setdefault(result.result_id, result)
        return tuple(sorted(seen.values(), key=lambda r: (r.started_at, r.result_id)))


@dataclass(frozen=True, slots=True)
class RunReportView:
    title: str
    scope: str
    runs: tuple[str, ...]
    outcome_counts: tuple[tuple[str, int], ...]
    gates_closed: tuple[str, ...]
    """Gates whose latest result on every row they ran on passed."""
    gates_open: tuple[str, ...]
    """Gates required by the matrix or run here whose latest result somewhere did not pass."""
    matrix: MatrixView
    sections: tuple[Section, ...]


def _gate_status(
    results: tuple[GateResult, ...], matrix: CompiledMatrix
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    latest: dict[tuple[str, str], GateResult] = {}
    for result in results:
        held = latest.get((result.gate_id, result.row))
        if held is None or result.finished_at >= held.finished_at:
            latest[(result.gate_id, result.row)] = result
    gates = {gate for row in matrix.rows for gate in row.required_gates} | {
        gate for gate, _ in latest
    }
    closed = {
        gate
        for gate in gates
        if any(g == gate for g, _ in latest)
        and all(r.outcome is GateOutcome.PASSED for (g, _), r in latest.items() if g == gate)
    }
    return tuple(sorted(closed)), tuple(sorted(gates - closed))


def _section_results(results: tuple[GateResult, ...], section: str) -> tuple[GateResult, ...]:
    return tuple(r for r in results if SECTION_BY_KIND.get(r.gate_kind, "other") == section)


def _gate_evidence(results: tuple[GateResult, ...], labels: RowLabels) -> tuple[Block, ...]:
    """The usual content for a checklist section: its results, their cases and measurements."""
    return non_empty(
        result_table("Gate results", results, labels),
        case_table("Cases", results),
        measurement_table("Measurements", results, labels),
    )


def _contract(results: tuple[GateResult, ...], labels: RowLabels) -> Section:
    contract = _section_results(results, "contract")
    deviations = tuple(
        f"{c.id} ({c.endpoint}): expected {c.expected_status}, observed {c.observed_status}"
        + (f" ({safe_text(c.note)})" if c.note else "")
        for r in contract
        for c in r.cases
        if c.deviation
    )
    blocks = non_empty(
        revision_table(results),
        serve_command_table(results),
        *_gate_evidence(contract, labels),
        Bullets("Declared deviations from the official contract", deviations),
    )
    return Section(1, "Official contract", blocks)


def _implementation(
    matrix: CompiledMatrix, results: tuple[GateResult, ...], labels: RowLabels
) -> Section:
    notes = tuple(
        f"{row_label(labels, row.key)}: {safe_text(row.note, limit=400)}"
        for row in matrix.rows
        if row.note
    )
    blocks = non_empty(parameter_table(results, labels), Bullets("Row notes", notes))
    return Section(3, "Implementation notes", blocks)


def _reproduction(
    runs: tuple[RunSummary, ...], results: tuple[GateResult, ...], labels: RowLabels
) -> Section:
    run_rows = tuple(
        (
            run.run_id,
            run.status,
            run.started_at.isoformat(),
            run.finished_at.isoformat(),
            safe_command(run.command),
        )
        for run in runs
    )
    commands = tuple(
        (r.gate_id, row_label(labels, r.row), safe_text(r.target), safe_command(r.command))
        for r in results
        if r.command
    )
    blocks = non_empty(
        Table("Runs", ("Run", "Status", "Started", "Finished", "Command"), run_rows),
        *environment_blocks(runs),
        Table("Gate commands", ("Gate", "Row", "Target", "Command"), commands),
    )
    return Section(4, "Reproduction", blocks)


def _limitations(view: MatrixView) -> Section:
    rows = tuple(
        (
            f"#{row.number}",
            "; ".join(
                [group.title] * (group.title != "all rows")
                + [f"{c}={v}" for c, v in zip(group.columns, row.cells, strict=True)]
            ),
            row.state,
            "; ".join(row.reasons),
        )
        for group in view.groups
        for row in group.rows
        if row.state != CellState.VALIDATED.value
    )
    note = "none: every row in the matrix is validated" if view.total else "no rows in the matrix"
    table = Table("Rows that are not validated", ("#", "Row", "State", "Reasons"), rows)
    title = "Limitations / TODO (not implied support)"
    return Section(10, title, non_empty(table), empty_note=note)


def run_report_view(evidence: RunEvidence) -> RunReportView:
    results = evidence.all_results()
    matrix = matrix_view(evidence.matrix)
    labels = {row.key: f"#{row.number}" for group in matrix.groups for row in group.rows}
    counts = Counter(r.outcome for r in results)
    closed, open_ = _gate_status(results, evidence.matrix)

    def evidence_of(section: str) -> tuple[Block, ...]:
        return _gate_evidence(_section_results(results, section), labels)

    sections = [
        _contract(results, labels),
        Section(2, "Scoped feature compatibility matrix (four states only)", includes_matrix=True),
        _implementation(evidence.matrix, results, labels),
        _reproduction(evidence.runs, results, labels),
        Section(
            5,
            "Fixed accuracy inputs and artifacts",
            non_empty(
                artifact_table(results),
                *parity_blocks(_section_results(results, "accuracy"), labels),
                *evidence_of("accuracy"),
            ),
        ),
        Section(
            6,
            "Performance (raw)",
            non_empty(
                *sweep_blocks(_section_results(results, "performance"), labels),
                *evidence_of("performance"),
            ),
        ),
        Section(7, "Output contract and stage accounting", evidence_of("output")),
        Section(8, "Abort / disconnect / fault results", evidence_of("fault")),
        Section(
            9,
            "CI tracks (files and owners)",
            empty_note=f"{NO_EVIDENCE}: run records carry no CI track files or owners",
        ),
        _limitations(matrix),
    ]
    other = evidence_of("other")
    if other:
        sections.append(
            Section(11, "Other gate evidence (check kinds outside the checklist)", other)
        )
    return RunReportView(
        title=evidence.title,
        scope=evidence.scope,
        runs=tuple(run.run_id for run in evidence.runs),
        outcome_counts=tuple((o.value, counts.get(o, 0)) for o in GateOutcome),
        gates_closed=closed,
        gates_open=open_,
        matrix=matrix,
        sections=tuple(sections),
    )
