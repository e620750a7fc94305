"""Verdict stability: how often reruns of the same build agreed, per gate on a row and per row.

A qualification verdict that changes on a rerun is not evidence. Given the verdicts of several
runs of one campaign (each run's gate outcomes and the row states compiled from that run alone),
this module says, per (gate, row), every outcome seen, how many runs agreed with the most common
one and how many decided at all (``passed`` or ``failed``), and whether the verdict moved
between ``passed`` and ``failed`` (the one movement that is never acceptable: ``invalid`` with a
stated reason is an honest "could not tell"); and per row, whether every run derived the same
state. A gate is stable only when every run that ran it gave the same *decision*: one that was
``invalid`` in every run never decided, which shows nothing about the build's stability.

Only runs of one build share a table: each run states the facts of what it ran (the omniqual
that ran it, and per row the vLLM-Omni release, checkpoint, serve configuration ...) and runs
that disagree on one are refused (:class:`MixedBuilds`). Pure: no files, no clock.
"""

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from omniqual.domain.outcomes import CellState, GateOutcome

BuildFacts = Mapping[str, frozenset[str]]
"""What a run was a run of: per fact ("omniqual", or a revision field on a row, such as
"vllm_omni_version on ROW"), every value its records carry."""


class MixedBuilds(ValueError):
    """Runs of different builds were given for one stability table."""


@dataclass(frozen=True, slots=True)
class RunVerdicts:
    """One run's verdicts: its latest outcome (and first reason) per (gate id, row key), the
    state each row compiles to from this run's evidence alone, the facts of its build, and how
    many sessions recorded it (more than one: it was resumed)."""

    run_id: str
    gates: Mapping[tuple[str, str], tuple[GateOutcome, str]]
    states: Mapping[str, CellState]
    build: BuildFacts = field(default_factory=dict)
    sessions: int = 1

    @property
    def resumed(self) -> bool:
        return self.sessions > 1


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
    def decided(self) -> int:
        """Runs whose verdict was a decision (passed or failed)."""
        return sum(o is not None and o.conclusive for o in self.outcomes)

    @property
    def decisiveness(self) -> float:
        """Share of the runs that ran the gate whose verdict decided (``invalid`` counts)."""
        return self.decided / self.ran if self.ran else 0.0

    @property
    def never_decided(self) -> bool:
        return self.ran > 0 and self.decided == 0

    @property
    def pass_fail_flip(self) -> bool:
        seen = set(self.outcomes)
        return GateOutcome.PASSED in seen and GateOutcome.FAILED in seen

    @property
    def stable(self) -> bool:
        # Runs agreeing that nobody could tell (invalid every time) agree on no verdict: calling
        # that "stable" would let a gate that never measures pass for a reproducible one.
        return self.ran > 0 and self.agreeing == self.ran and self.decided == self.ran


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
    sessions: tuple[int, ...] = ()
    """Per run, the sessions that recorded it: more than one where it was resumed (its verdicts
    then come from several sessions, not one run through)."""

    @property
    def resumed(self) -> tuple[bool, ...]:
        return tuple(n > 1 for n in self.sessions)

    @property
    def flips(self) -> tuple[GateStability, ...]:
        """Gate verdicts that moved between passed and failed across the runs."""
        return tuple(g for g in self.gates if g.pass_fail_flip)

    @property
    def unstable_gates(self) -> tuple[GateStability, ...]:
        return tuple(g for g in self.gates if g.ran > 0 and not g.stable)

    @property
    def never_decided(self) -> tuple[GateStability, ...]:
        """Gates that ran but were invalid (or errored) in every run that ran them."""
        return tuple(g for g in self.gates if g.never_decided)

    @property
    def unstable_rows(self) -> tuple[RowStability, ...]:
        return tuple(r for r in self.rows if not r.stable)

    @property
    def agreement(self) -> float:
        """Fraction of (gate, row) verdicts every run that ran it decided alike."""
        judged = [g for g in self.gates if g.ran > 0]
        return sum(g.stable for g in judged) / len(judged) if judged else 1.0

    @property
    def verdicts(self) -> int:
        """Gate verdicts given, over every gate, row and run."""
        return sum(g.ran for g in self.gates)

    @property
    def decided(self) -> int:
        """Of :attr:`verdicts`, those that decided (passed or failed)."""
        return sum(g.decided for g in self.gates)

    @property
    def decisiveness(self) -> float:
        return self.decided / self.verdicts if self.verdicts else 0.0

    @property
    def undecided_counts(self) -> dict[GateOutcome, int]:
        """The verdicts that decided nothing, by outcome (invalid, errored, skipped)."""
        seen = Counter(o for g in self.gates for o in g.outcomes if o is not None)
        return {o: n for o, n in seen.items() if not o.conclusive}


def stability(runs: Sequence[RunVerdicts]) -> StabilityTable:
    """The stability table of ``runs`` (in the order they ran). Rows are listed when any run
    compiled them to a state other than ``not tested`` (rows no run touched say nothing).
    Raises :class:`MixedBuilds` when the runs are not all of one build."""
    same_build(runs)
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
    return StabilityTable(tuple(run.run_id for run in runs), gates, rows,
                          tuple(run.sessions for run in runs))  # fmt: skip


SHOWN_DIFFERENCES = 3


def same_build(runs: Sequence[RunVerdicts]) -> None:
    """Raise :class:`MixedBuilds` naming what differs when a run's build facts disagree with
    those an earlier run recorded. A fact only one run records (a row only it reached) is no
    difference: it says nothing of the others."""
    seen: dict[str, tuple[str, frozenset[str]]] = {}
    """Per fact, the first run that recorded it and its values."""
    differences: list[str] = []
    for run in runs:
        for fact, values in sorted(run.build.items()):
            if fact not in seen:
                seen[fact] = (run.run_id, values)
                continue
            first, expected = seen[fact]
            if values != expected:
                differences.append(f"{run.run_id} differs from {first} in {fact} "
                                   f"({_values(expected)} in {first}, {_values(values)} in "
                                   f"{run.run_id})")  # fmt: skip
    if differences:
        shown = "; ".join(differences[:SHOWN_DIFFERENCES])
        more = len(differences) - SHOWN_DIFFERENCES
        raise MixedBuilds(
            "the runs are not all of one build, so their verdicts cannot share a stability "
            f"table: {shown}{f'; and {more} more' if more > 0 else ''}. Give reruns of one "
            "build (one vLLM-Omni release, checkpoint, serve configuration and omniqual)"
        )


def _values(values: frozenset[str]) -> str:
    return " + ".join(sorted(values)) or "none"


def _outcome(run: RunVerdicts, gate_id: str, row: str) -> GateOutcome | None:
    said = run.gates.get((gate_id, row))
    return None if said is None else said[0]
