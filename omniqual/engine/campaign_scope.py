"""What a campaign that runs only part of a matrix says about the rest.

A campaign made of ``include`` parts (the main job's tour) leaves some gates of its selected
rows to another campaign. A row that stays `not tested` for that reason says so first, naming
the gates left out and the campaign that runs them, so a reader never mistakes "not in this
campaign" for a missing or failed measurement."""

from collections.abc import Sequence

from omniqual.domain.matrix import CompiledMatrix
from omniqual.domain.outcomes import CellState

NOT_IN_CAMPAIGN = "not in this campaign"


def left_out_reason(gates: Sequence[str], full_campaign: str | None) -> str:
    where = f"see the full campaign, {full_campaign}" if full_campaign else "see the full campaign"
    return f"{NOT_IN_CAMPAIGN} ({where}): {', '.join(gates)}"


def mark_left_out(
    compiled: CompiledMatrix,
    left_out: Sequence[tuple[str, Sequence[str]]],
    full_campaign: str | None,
) -> CompiledMatrix:
    """``compiled`` with every `not tested` row the campaign left gates of leading with why."""
    gates_of = {row: tuple(gates) for row, gates in left_out if gates}
    rows = []
    changed = False
    for row in compiled.rows:
        gates = gates_of.get(row.key)
        if gates and row.state is CellState.NOT_TESTED:
            reason = left_out_reason(gates, full_campaign)
            row = row.model_copy(update={"reasons": (reason, *row.reasons)})
            changed = True
        rows.append(row)
    return compiled.model_copy(update={"rows": tuple(rows)}) if changed else compiled
