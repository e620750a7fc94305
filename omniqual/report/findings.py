"""The findings of a report: what a reviewer decides on, one line each, right after the states.

Every failed gate, every limitation and every invalid (or errored) gate, phrased from what the
record says (its reasons, its limitations, its error), never from words of the report's own.
A finding that several rows share word for word is one line naming every row it covers; its
link is the record of the first of them (the others are reached from their rows).
"""

from collections.abc import Iterable
from dataclasses import dataclass

from omniqual.domain.matrix import CompiledMatrix
from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.domain.result import GateResult
from omniqual.report.checklist import latest_results
from omniqual.report.evidence_blocks import RowLabels, row_label
from omniqual.report.links import EvidenceLinks
from omniqual.report.redact import safe_text
from omniqual.report.views import MatrixView, safe_link

FINDING_LIMIT = 240
"""A finding quotes its record up to this many characters; the linked record holds the rest."""
KINDS = ("failed", "limitation", "invalid", "errored")
"""The order findings are listed in: what fails first, then what holds only within bounds,
then what measured nothing."""
NO_REASON = "no reason recorded"
NOT_IN_MATRIX = "the compiled matrix keeps the outcome only (the run report quotes the record)"
_NOT_PASSED = (GateOutcome.FAILED, GateOutcome.INVALID, GateOutcome.ERRORED)


@dataclass(frozen=True, slots=True)
class RowRef:
    label: str
    """How the report names the row (``#3``)."""
    anchor: str
    """The row's anchor in the rendered matrix (``row-3``); "" when it is not in the matrix."""


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str
    """One of ``KINDS``."""
    gate: str
    """"" for a row's own limitation (the matrix states it; the row lists its evidence)."""
    text: str
    """From the record: its reasons, its limitation or its error."""
    rows: tuple[RowRef, ...]
    link: str
    """The record of the first row's result, or the first row's anchor (``#row-4``) for a
    row's own limitation; "" when neither can be located."""

    @property
    def line(self) -> str:
        """``gate on #3, #7: failed: <what the record says>`` (plain text)."""
        where = ", ".join(r.label for r in self.rows)
        return f"{self.gate + ' on ' if self.gate else ''}{where}: {self.kind}: {self.text}"


def _said(reasons: Iterable[str], error: str = "") -> str:
    """The reasons as one line (``3 reasons: a; b; c``), else the error, else a placeholder."""
    reasons = tuple(reasons)
    if not reasons:
        return safe_text(error, limit=FINDING_LIMIT) if error else NO_REASON
    shown = safe_text("; ".join(reasons), limit=FINDING_LIMIT)
    return shown if len(reasons) == 1 else f"{len(reasons)} reasons: {shown}"


def _ref(labels: RowLabels, key: str) -> RowRef:
    label = row_label(labels, key)
    return RowRef(label, f"row-{label[1:]}" if key in labels and label[:1] == "#" else "")


class _Collector:
    """Findings grouped by (kind, gate, text) in first-seen order."""

    def __init__(self) -> None:
        self._rows: dict[tuple[str, str, str], list[RowRef]] = {}
        self._links: dict[tuple[str, str, str], str] = {}

    def add(self, kind: str, gate: str, text: str, row: RowRef, link: str) -> None:
        key = (kind, gate, text)
        rows = self._rows.setdefault(key, [])
        if row not in rows:
            rows.append(row)
        if not self._links.get(key):
            self._links[key] = link

    def findings(self) -> tuple[Finding, ...]:
        ordered = sorted(self._rows, key=lambda k: KINDS.index(k[0]))  # stable: first seen
        return tuple(
            Finding(kind, gate, text, tuple(self._rows[(kind, gate, text)]),
                    self._links[(kind, gate, text)])
            for kind, gate, text in ordered
        )  # fmt: skip


def run_findings(
    results: Iterable[GateResult], matrix: CompiledMatrix, labels: RowLabels, links: EvidenceLinks
) -> tuple[Finding, ...]:
    """From the latest result per gate and row, and the matrix's limited rows."""
    found = _Collector()
    limited: dict[str, set[str]] = {}
    for r in latest_results(results):
        href = links.result(r.run_id, r.result_id)
        row = _ref(labels, r.row)
        if r.outcome in _NOT_PASSED:
            error = f"{r.error.type}: {r.error.message}" if r.error else ""
            found.add(r.outcome.value, r.gate_id, _said(r.reasons, error), row, href)
        for limitation in r.limitations:
            text = safe_text(limitation, limit=FINDING_LIMIT)
            found.add("limitation", r.gate_id, text, row, href)
            limited.setdefault(r.row, set()).add(limitation)
    for compiled in matrix.rows:
        lim = compiled.limitation
        if compiled.state is CellState.LIMITED and lim and lim not in limited.get(compiled.key, ()):
            row = _ref(labels, compiled.key)
            found.add("limitation", "", safe_text(lim, limit=FINDING_LIMIT), row,
                      f"#{row.anchor}" if row.anchor else "")  # fmt: skip
    return found.findings()


def matrix_findings(matrix: CompiledMatrix, view: MatrixView) -> tuple[Finding, ...]:
    """From the compiled rows alone (the matrix report has no results): each gate of a row
    whose latest outcome failed, was invalid or errored, with the row's reason naming it, and
    each limited row's limitation. The link is the gate's evidence on the row, else the row."""
    numbers = {row.key: row.number for group in view.groups for row in group.rows}
    found = _Collector()
    # Links are relative to the compiled matrix, like the rows' own evidence links.
    for compiled in matrix.rows:
        number = numbers.get(compiled.key, 0)
        row = RowRef(f"#{number}", f"row-{number}")
        gates = dict.fromkeys((*compiled.required_gates, *compiled.gate_outcomes))
        for gate in gates:
            outcome = compiled.gate_outcomes.get(gate, "")
            if outcome not in (o.value for o in _NOT_PASSED):
                continue
            said = [r for r in compiled.reasons if r.startswith(f"{gate}:")]
            text = (
                _said(r.removeprefix(f"{gate}:").strip() for r in said) if said else NOT_IN_MATRIX
            )
            ref = next((e for e in compiled.evidence if e.gate_id == gate), None)
            found.add(outcome, gate, text, row, safe_link(ref.link) if ref else f"#{row.anchor}")
        if compiled.state is CellState.LIMITED and compiled.limitation:
            text = safe_text(compiled.limitation, limit=FINDING_LIMIT)
            found.add("limitation", "", text, row, f"#{row.anchor}")
    return found.findings()
