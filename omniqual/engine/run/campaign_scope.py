"""What a campaign that runs only part of a matrix says about the rest.

A campaign made of ``include`` parts (the main job's tour) leaves some gates of its selected
rows to another campaign. A row that stays `not tested` for that reason says so first, naming
the gates left out and the campaign that runs them, so a reader never mistakes "not in this
campaign" for a missing or failed measurement. Which rows it qualifies in full and which it only
samples (``rows_reached``) comes from its plan, so the report's first screen can say it."""

from collections.abc import Sequence
from dataclasses import dataclass

from omniqual.domain.matrix import CompiledMatrix
from omniqual.domain.outcomes import CellState
from omniqual.engine.matrix_service import ProjectMatrix
from omniqual.engine.run.plan import Plan, wanted_gates

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


@dataclass(frozen=True, slots=True)
class RowReach:
    """What a campaign runs of one row it runs any gate on."""

    row: str
    ran: tuple[str, ...]
    """The gates it runs there, in plan order."""
    left_out: tuple[str, ...]
    """The gates that could decide the row's state (``requires``, ``unsupported_by``, the
    ``limited`` gates) that it leaves to another campaign."""

    @property
    def full(self) -> bool:
        # "In full" means every gate that can decide the row, not only its `requires`: a row
        # whose refusal gate is left out could end elsewhere under the full campaign, so a
        # campaign that ran only its `requires` has sampled it, not qualified it.
        return not self.left_out


def rows_reached(plan: Plan, project: ProjectMatrix) -> tuple[RowReach, ...]:
    """Every row ``plan`` runs a gate on, in matrix order: the rows it qualifies in full (it runs
    every gate that can decide the row) and those it only samples. What is left out is counted
    against the row's own gates (those whose selector takes it), not the plan's: a campaign
    narrowed by ``gates:`` leaves the others out as surely as one made of ``include`` parts."""
    ran: dict[str, list[str]] = {}
    for work in plan.work:
        for item in work.items:
            ran.setdefault(str(item.row), []).append(item.gate.spec.id)
    reached = []
    for row in project.matrix.rows:
        gates = tuple(dict.fromkeys(ran.get(str(row.key), ())))
        if not gates:
            continue
        takes_row = {g for g, gate in project.gates.items() if gate.selector.matches(row.key)}
        deciding = dict.fromkeys(g for g in wanted_gates(row.spec) if g in takes_row)
        reached.append(RowReach(str(row.key), gates, tuple(g for g in deciding if g not in gates)))
    return tuple(reached)
