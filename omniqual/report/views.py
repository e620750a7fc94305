"""View-models of a compiled matrix: grouped rows, varying axes as columns, legend and counts.

Pure functions of a ``CompiledMatrix``. Every cell carries the exact state string (never a
symbol), every non-validated row carries its reasons, every row points at its evidence.
"""

import re
from dataclasses import dataclass

from omniqual.domain.matrix import CompiledMatrix, CompiledRow, EvidenceRef
from omniqual.domain.outcomes import CellState
from omniqual.report.blocks import NO_EVIDENCE
from omniqual.report.redact import safe_text

GROUP_AXES: tuple[str, ...] = ("model", "task", "api_mode")
"""Axes that, when they vary, split the matrix into sub-tables (in this order)."""
MAX_GROUP_AXES = 2
"""At most this many axes make up a group title; the rest stay table columns."""
SHA_PREFIX = 12

NO_REASON = "no reason recorded (a non-validated row must state one)"

STATE_MEANINGS: tuple[tuple[CellState, str], ...] = (
    (
        CellState.VALIDATED,
        "This exact row passed its correctness and deployment gates, and the passing results "
        "carry reproducible artifacts.",
    ),
    (
        CellState.LIMITED,
        "A bounded subset passed; the stated limitation applies, and inputs outside it were shown "
        "to be rejected or to fall back visibly.",
    ),
    (
        CellState.UNSUPPORTED,
        "A stable restriction was proven: the combination fails early with an actionable error.",
    ),
    (
        CellState.NOT_TESTED,
        "No adequate evidence exists for this exact row. This is the default; it claims nothing.",
    ),
)


@dataclass(frozen=True, slots=True)
class EvidenceView:
    run_id: str
    result_id: str
    gate_id: str
    outcome: str
    link: str
    """Safe to use as a hyperlink target; empty when the recorded link was not a plain path."""
    link_text: str
    artifacts: tuple[str, ...]
    """sha256 prefixes of the artifacts behind this result."""


@dataclass(frozen=True, slots=True)
class RowView:
    number: int
    """Position in the rendered matrix, counting from 1 across groups."""
    anchor: str
    key: str
    cells: tuple[str, ...]
    """Values of the group's column axes, in column order."""
    state: str
    state_class: str
    reasons: tuple[str, ...]
    gates: tuple[str, ...]
    """``gate: latest outcome`` for each required gate (``no result`` when none)."""
    evidence: tuple[EvidenceView, ...]
    evidence_note: str
    """Shown when ``evidence`` is empty."""
    notes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class GroupView:
    title: str
    columns: tuple[str, ...]
    rows: tuple[RowView, ...]


@dataclass(frozen=True, slots=True)
class StateCount:
    state: str
    state_class: str
    count: int


@dataclass(frozen=True, slots=True)
class LegendEntry:
    state: str
    state_class: str
    meaning: str


@dataclass(frozen=True, slots=True)
class MatrixView:
    name: str
    title: str
    compiled_at: str
    schema_version: int
    runs: tuple[str, ...]
    evidence_dirs: tuple[str, ...]
    common: tuple[tuple[str, str], ...]
    """Axes with one value across every row, shown once instead of in every row."""
    varying: tuple[str, ...]
    groups: tuple[GroupView, ...]
    legend: tuple[LegendEntry, ...]
    counts: tuple[StateCount, ...]
    total: int


def state_class(state: CellState | str) -> str:
    """CSS class for a state (``not tested`` → ``state-not-tested``)."""
    return "state-" + str(state).replace(" ", "-")


def short_sha(sha256: str) -> str:
    return sha256[:SHA_PREFIX]


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def safe_link(link: str) -> str:
    """Relative paths and http(s) URLs pass; other schemes (``javascript:``…) are dropped."""
    if _SCHEME.match(link) and not link.lower().startswith(("http://", "https://")):
        return ""
    return link


def evidence_view(ref: EvidenceRef) -> EvidenceView:
    return EvidenceView(
        run_id=ref.run_id,
        result_id=ref.result_id,
        gate_id=ref.gate_id,
        outcome=ref.outcome,
        link=safe_link(ref.link),
        link_text=f"{ref.gate_id}: {ref.outcome}",
        artifacts=tuple(short_sha(a) for a in ref.artifacts),
    )


def row_reasons(row: CompiledRow) -> tuple[str, ...]:
    """The row's reasons, with its limitation made explicit and a placeholder where one is due."""
    reasons = list(row.reasons)
    limited = row.state is CellState.LIMITED
    if limited and row.limitation and not any(row.limitation in r for r in reasons):
        reasons.insert(0, f"limitation: {row.limitation}")
    if not reasons and row.state is not CellState.VALIDATED:
        reasons.append(NO_REASON)
    return tuple(safe_text(r, limit=400) for r in reasons)


def _row_notes(row: CompiledRow) -> tuple[str, ...]:
    notes: list[str] = []
    if row.declared is not None and row.declared != row.state:
        notes.append(f"declared '{row.declared.value}', but the evidence says '{row.state.value}'")
    if row.note:
        notes.append(safe_text(row.note, limit=400))
    return tuple(notes)


def _evidence_note(row: CompiledRow) -> str:
    if row.evidence:
        return ""
    if row.state is CellState.NOT_TESTED:
        return NO_EVIDENCE
    return f"{NO_EVIDENCE} (a '{row.state.value}' row must link its evidence)"


def row_view(row: CompiledRow, columns: tuple[str, ...], number: int) -> RowView:
    return RowView(
        number=number,
        anchor=f"row-{number}",
        key=row.key,
        cells=tuple(row.axes.get(axis, "") for axis in columns),
        state=row.state.value,
        state_class=state_class(row.state),
        reasons=row_reasons(row),
        gates=tuple(
            f"{gate}: {row.gate_outcomes.get(gate, 'no result')}" for gate in row.required_gates
        ),
        evidence=tuple(evidence_view(ref) for ref in row.evidence),
        evidence_note=_evidence_note(row),
        notes=_row_notes(row),
    )


def split_axes(matrix: CompiledMatrix) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """(axes constant over every row with their value, axes that vary), in matrix axis order."""
    ordered = list(matrix.axes)
    for row in matrix.rows:
        ordered.extend(a for a in row.axes if a not in ordered)
    common: list[tuple[str, str]] = []
    varying: list[str] = []
    for axis in ordered:
        values = {row.axes.get(axis, "") for row in matrix.rows}
        if len(values) == 1:
            common.append((axis, values.pop()))
        elif values:
            varying.append(axis)
    return tuple(common), tuple(varying)


def _groups(matrix: CompiledMatrix, varying: tuple[str, ...]) -> tuple[GroupView, ...]:
    """Rows bucketed by the varying group axes; groups and rows keep the matrix's own order."""
    group_axes = tuple(a for a in GROUP_AXES if a in varying)[:MAX_GROUP_AXES]
    columns = tuple(a for a in varying if a not in group_axes)
    buckets: dict[tuple[str, ...], list[CompiledRow]] = {}
    for row in matrix.rows:
        buckets.setdefault(tuple(row.axes.get(a, "") for a in group_axes), []).append(row)
    groups: list[GroupView] = []
    number = 0
    for values, rows in buckets.items():
        views = []
        for row in rows:
            number += 1
            views.append(row_view(row, columns, number))
        title = "; ".join(f"{a}={v}" for a, v in zip(group_axes, values, strict=True))
        groups.append(GroupView(title=title or "all rows", columns=columns, rows=tuple(views)))
    return tuple(groups)


def matrix_view(matrix: CompiledMatrix) -> MatrixView:
    common, varying = split_axes(matrix)
    counts = matrix.counts()
    return MatrixView(
        name=matrix.name,
        title=matrix.title or matrix.name,
        compiled_at=matrix.compiled_at.isoformat(),
        schema_version=matrix.schema_version,
        runs=matrix.runs,
        evidence_dirs=matrix.evidence_dirs,
        common=common,
        varying=varying,
        groups=_groups(matrix, varying),
        legend=tuple(LegendEntry(s.value, state_class(s), m) for s, m in STATE_MEANINGS),
        counts=tuple(StateCount(s.value, state_class(s), counts[s]) for s in CellState),
        total=len(matrix.rows),
    )
