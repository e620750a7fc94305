"""Verdict stability: how often reruns of the same build agreed, per gate on a row and per row.

A qualification verdict that changes on a rerun is not evidence. Given the verdicts of several
runs of one campaign (each run's gate outcomes and the row states compiled from that run alone),
this module says, per (gate, row), every outcome seen and how many runs agreed with the most
common one, and whether the verdict moved between ``passed`` and ``failed`` (the one movement
that is never acceptable: ``invalid`` with a stated reason is an honest "could not tell"); and
per row, whether every run derived the same state. Pure: no files, no clock.
"""

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from omniqual.domain.outcomes import CellState, GateOutcome


@dataclass(frozen=True, slots=True)
class RunVerdicts:
    """One run's verdicts: its latest outcome (and first reason) per (gate id, row key), and
    the state each row compiles to from this run's evidence alone."""

    run_id: str
    gates: Mapping[tuple[str, str], tuple[GateOutcome, str]]
    states: Mapping[str, CellState]


@dataclass(frozen=True, slots=True)
class GateStability:
    gate_id: str
    row: str
    outcomes: tuple[GateOutcome | None, ...]
    """Per run, in run order; None where that run did not run the gate on the row."""
    reasons: tuple[str, ...]
    """Per run, the first reason recorded ("" when none or not run)."""

    @property
    def ran(self) -> int:
        return sum(o is not None for o in self.outcomes)

    @property
    def agreeing(self) -> int:
        """Runs that gave the most common verdict."""
        seen = Counter(o for o in self.outcomes if o is not None)
        return max(seen.values(), default=0)

    @property
    def pass_fail_flip(self) -> bool:
        seen = set(self.outcomes)
        return GateOutcome.PASSED in seen and GateOutcome.FAILED in seen

    @property
    def stable(self) -> bool:
        return self.ran > 0 and self.agreeing == self.ran


@dataclass(frozen=True, slots=True)
class RowStability:
    row: str
    states: tuple[CellState | None, ...]

    @property
    def stable(self) -> bool:
        return len({s for s in self.states if s is not None}) <= 1


@dataclass(frozen=True, slots=True)
class StabilityTable:
    run_ids: tuple[str, ...]
    gates: tuple[GateStability, ...]
    rows: tuple[RowStability, ...]

    @property
    def flips(self) -> tuple[GateStability, ...]:
        """Gate verdicts that moved between passed and failed across the runs."""
        return tuple(g for g in self.gates if g.pass_fail_flip)

    @property
    def unstable_gates(self) -> tuple[GateStability, ...]:
        return tuple(g for g in self.gates if not g.stable)

    @property
    def unstable_rows(self) -> tuple[RowStability, ...]:
        return tuple(r for r in self.rows if not r.stable)

    @property
    def agreement(self) -> float:
        """Fraction of (gate, row) verdicts on which every run that ran it agreed."""
        judged = [g for g in self.gates if g.ran > 0]
        return sum(g.stable for g in judged) / len(judged) if judged else 1.0


def stability(runs: Sequence[RunVerdicts]) -> StabilityTable:
    """The stability table of ``runs`` (in the order they ran). Rows are listed when any run
    compiled them to a state other than ``not tested`` (rows no run touched say nothing)."""
    gate_keys = sorted({key for run in runs for key in run.gates})
    gates = tuple(
        GateStability(
            gate_id=gate_id,
            row=row,
            outcomes=tuple(_outcome(run, gate_id, row) for run in runs),
            reasons=tuple(
                run.gates[(gate_id, row)][1] if (gate_id, row) in run.gates else "" for run in runs
            ),
        )
        for gate_id, row in gate_keys
    )
    touched = sorted(
        {
            row
            for run in runs
            for row, state in run.states.items()
            if state is not CellState.NOT_TESTED
        }
    )
    rows = tuple(RowStability(row, tuple(run.states.get(row) for run in runs)) for row in touched)
    return StabilityTable(tuple(run.run_id for run in runs), gates, rows)


def _outcome(run: RunVerdicts, gate_id: str, row: str) -> GateOutcome | None:
    said = run.gates.get((gate_id, row))
    return None if said is None else said[0]
