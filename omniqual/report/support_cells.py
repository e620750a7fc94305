"""One cell of a vLLM-Omni-shaped feature table, derived from the compiled rows it covers.

A row uses the features (columns) whose axis values its key holds, and those a gate it requires
qualifies on its own server (a per-request LoRA column: the row requiring ``lora``). A
model-table cell (model, feature, hardware) is covered by that model's rows of the section's
tasks, on that hardware, whose one used feature is that feature; a pair cell by rows of any
model, on that hardware, whose used features are exactly the pair. A model's baseline row (no
feature) and a row that combines features decide nothing for a single feature's cell; rows of
other hardware never speak for it. No covering row: not tested. A ✅ needs every decided covering
row to agree; a failed or refused one makes the cell ❓ or ❌ with the failure named
(:func:`derive_cell`).
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


@dataclass(frozen=True, slots=True)
class FeatureCell:
    """What the evidence says about one feature (or pair) on one model (or any) and hardware."""

    column: str
    state: CellState
    row_key: str = ""
    """The covering row the cell stands on; empty when no row covers the cell."""
    model: str = ""
    link: str = ""
    """Evidence of the row the cell stands on (empty for a not-tested cell)."""
    note: str = ""
    """The limitation (limited), the refusal (unsupported) or the failure that leaves it not
    verified, each naming its configuration when several rows cover the cell."""
    failed_gates: tuple[str, ...] = ()
    """Required gates whose latest result failed, on any covering row."""
    covering: int = 0

    @property
    def symbol(self) -> str:
        return SYMBOLS[self.state]


def used_features(columns: Sequence[FeatureColumn], row: CompiledRow) -> frozenset[str]:
    return frozenset(c.label for c in columns if c.used_by(row.axes, row.required_gates))


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
        and used_features(columns, row) == features
    ]


def failed_required(row: CompiledRow) -> tuple[str, ...]:
    """The gates deciding ``row`` whose latest result failed. A row claiming only a refusal
    requires nothing; its deciding gates are the ones recorded on it (its refusal), so a
    refusal that failed (served, or crashed naming nothing) is named, never silent."""
    failed = GateOutcome.FAILED.value
    deciding = row.required_gates or tuple(sorted(row.gate_outcomes))
    return tuple(g for g in deciding if row.gate_outcomes.get(g) == failed)


def _lane(row: CompiledRow, rows: Sequence[CompiledRow]) -> str:
    """What tells ``row`` from the other covering rows: its values of the axes they differ on
    ("offload=layerwise"); "" when it is the only one."""
    varying = sorted({axis for other in rows for axis in other.axes
                      if len({r.axes.get(axis) for r in rows}) > 1})  # fmt: skip
    return ",".join(f"{axis}={row.axes[axis]}" for axis in varying if axis in row.axes)


def _named(lane: str, text: str) -> str:
    return f"{lane}: {text}" if lane else text


def _refusal(row: CompiledRow) -> str:
    said = "; ".join(row.reasons[:2]) or "refused"
    return f"{said} ({row.note.strip()})" if row.note.strip() else said


def _failure(row: CompiledRow) -> str:
    """The failed required gates' own reasons first (a row's other gaps come after them)."""
    gates = failed_required(row)
    about = [r for r in row.reasons if any(g in r for g in gates)]
    return "; ".join((about or [f"{', '.join(gates)} failed"])[:2])


def _passed_on(passing: Sequence[CompiledRow], rows: Sequence[CompiledRow]) -> str:
    lanes = [_lane(row, rows) for row in passing]
    return f"; passed on {', '.join(lanes)}" if passing else ""


def derive_cell(column: str, rows: Sequence[CompiledRow]) -> FeatureCell:
    """The cell ``rows`` (its covering rows) make.

    A tick needs every decided covering row to say yes: one configuration of the feature that
    failed a required gate makes the cell not verified (❓, the failure named), one that was
    refused makes it ❌ (the refusal named), and the rows that passed are named beside either.
    A failure outranks a refusal: ❌ promises an early, actionable error, which a lane that
    was accepted and then misbehaved does not give. Among passing rows a limited one bounds the
    tick (its limitation is the note). A covering row nothing was recorded on is absent
    evidence, not contrary evidence, and decides nothing; without a decided row the cell is
    not tested. The cell stands on (links) the first deciding row by key."""
    ordered = sorted(rows, key=lambda row: row.key)
    if not ordered:
        return FeatureCell(column, CellState.NOT_TESTED)
    failing = [r for r in ordered if r.state is CellState.NOT_TESTED and failed_required(r)]
    refused = [r for r in ordered if r.state is CellState.UNSUPPORTED]
    limited = [r for r in ordered if r.state is CellState.LIMITED]
    passing = [r for r in ordered if r.state in (CellState.VALIDATED, CellState.LIMITED)]
    if failing:
        state, deciding = CellState.NOT_TESTED, failing
        note = "not verified: " + "; ".join(_named(_lane(r, rows), _failure(r)) for r in failing)
        note += _passed_on(passing, rows)
    elif refused:
        state, deciding = CellState.UNSUPPORTED, refused
        note = "; ".join(_named(_lane(r, rows), _refusal(r)) for r in refused)
        note += _passed_on(passing, rows)
    elif limited:
        state, deciding = CellState.LIMITED, limited
        note = "limited: " + "; ".join(
            _named(_lane(r, rows), r.limitation or "; ".join(r.reasons) or "no limitation recorded")
            for r in limited)  # fmt: skip
    elif passing:
        state, deciding, note = CellState.VALIDATED, passing, ""
    else:
        state, deciding, note = CellState.NOT_TESTED, ordered, ""
    best = deciding[0]
    decided = state is not CellState.NOT_TESTED
    link = next((safe_link(ref.link) for ref in best.evidence if ref.link), "") if decided else ""
    failed = tuple(sorted({g for row in rows for g in failed_required(row)}))
    return FeatureCell(
        column=column,
        state=state,
        row_key=best.key,
        model=best.axes.get("model", ""),
        link=link,
        note=" ".join(note.split()),
        failed_gates=failed,
        covering=len(rows),
    )
