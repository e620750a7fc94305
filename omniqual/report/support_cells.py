"""One cell of a vLLM-Omni-shaped feature table, derived from the compiled rows it covers.

A row uses the features (columns) whose axis values its key holds. A model-table cell (model,
feature, hardware) is covered by that model's rows of the section's tasks, on that hardware,
whose one used feature is that feature; a pair cell by rows of any model, on that hardware,
whose used features are exactly the pair. A model's baseline row (no feature) and a row that
combines features decide nothing for a single feature's cell; rows of other hardware never speak
for it. No covering row: not tested.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from omniqual.domain.feature_tables import FeatureColumn
from omniqual.domain.matrix import CompiledRow
from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.report.views import safe_link

SYMBOLS = {
    CellState.VALIDATED: "✅",
    CellState.LIMITED: "✅",
    CellState.UNSUPPORTED: "❌",
    CellState.NOT_TESTED: "❓",
}
RANK = (CellState.VALIDATED, CellState.LIMITED, CellState.UNSUPPORTED, CellState.NOT_TESTED)


@dataclass(frozen=True, slots=True)
class FeatureCell:
    """What the evidence says about one feature (or pair) on one model (or any) and hardware."""

    column: str
    state: CellState
    row_key: str = ""
    """The best covering row; empty when no row covers the cell."""
    model: str = ""
    link: str = ""
    """Evidence of the best covering row (empty for a not-tested cell)."""
    note: str = ""
    """The limitation (limited), the refusal (unsupported) or why it is not verified."""
    failed_gates: tuple[str, ...] = ()
    """Required gates whose latest result failed, on any covering row."""
    covering: int = 0

    @property
    def symbol(self) -> str:
        return SYMBOLS[self.state]


def used_features(columns: Sequence[FeatureColumn], axes: dict[str, str]) -> frozenset[str]:
    return frozenset(c.label for c in columns if c.used_by(axes))


def covering_rows(
    rows: Iterable[CompiledRow],
    columns: Sequence[FeatureColumn],
    features: frozenset[str],
    *,
    hardware: str,
    model: str | None = None,
    tasks: tuple[str, ...] | None = None,
) -> list[CompiledRow]:
    """Rows on ``hardware`` (of ``model`` and ``tasks`` when given) using exactly ``features``."""
    return [
        row
        for row in rows
        if row.axes.get("hardware") == hardware
        and (model is None or row.axes.get("model") == model)
        and (tasks is None or row.axes.get("task") in tasks)
        and used_features(columns, row.axes) == features
    ]


def best_row(rows: Sequence[CompiledRow]) -> CompiledRow | None:
    """The covering row a cell shows: validated, then limited, then unsupported, then not tested
    (ties: the first by row key).

    A cell answers "can this feature be used here"; one configuration shown to work answers yes,
    even when another configuration of the same feature (a pinned-memory lane beside an unpinned
    one) is refused, so a refusal only shows when no covering row passed. Limited ranks below
    validated because it says yes only within its bound. Not tested claims nothing and never
    hides a decided row."""
    ranked = sorted(rows, key=lambda row: (RANK.index(row.state), row.key))
    return ranked[0] if ranked else None


def failed_required(row: CompiledRow) -> tuple[str, ...]:
    failed = GateOutcome.FAILED.value
    return tuple(g for g in row.required_gates if row.gate_outcomes.get(g) == failed)


def _note(row: CompiledRow) -> str:
    if row.state is CellState.LIMITED:
        return f"limited: {row.limitation or '; '.join(row.reasons) or 'no limitation recorded'}"
    if row.state is CellState.UNSUPPORTED:
        said = "; ".join(row.reasons[:2]) or "refused"
        return f"{said} ({row.note.strip()})" if row.note.strip() else said
    if row.state is CellState.NOT_TESTED and failed_required(row):
        return f"not verified: {'; '.join(row.reasons[:2])}"
    return ""


def derive_cell(column: str, rows: Sequence[CompiledRow]) -> FeatureCell:
    """The cell ``rows`` (its covering rows) make: the best row's state, evidence and note."""
    best = best_row(rows)
    if best is None:
        return FeatureCell(column, CellState.NOT_TESTED)
    failed = tuple(sorted({g for row in rows for g in failed_required(row)}))
    decided = best.state is not CellState.NOT_TESTED
    link = next((safe_link(ref.link) for ref in best.evidence if ref.link), "") if decided else ""
    return FeatureCell(
        column=column,
        state=best.state,
        row_key=best.key,
        model=best.axes.get("model", ""),
        link=link,
        note=" ".join(_note(best).split()),
        failed_gates=failed,
        covering=len(rows),
    )
