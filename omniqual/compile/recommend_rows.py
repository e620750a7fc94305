"""What ``omniqual recommend`` reads of each compiled row: its state, and the results of the one
deployment that state rests on.

The rule table decides the state (``compile.matrix``); the results it rested on are the
compiled row's evidence (``Derivation.supporting``), all of one deployment (checkpoint, serve
config, served identity ...) or the state would be `not tested`. Beside them this keeps, per
gate, the latest current result on that same deployment: a correctness gate that failed there
must block a recommendation the rule table has no reason to block (it reads only the gates the
row requires), and a figure the supporting results lack (an offload sweep's memory) may be read
there. Results of other deployments never count.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from omniqual.compile.matrix import target_revisions
from omniqual.domain.definition_of_done import kind_of, recommendation_gates
from omniqual.domain.matrix import CompiledMatrix, CompiledRow, LoadedMatrix, PlannedRow
from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.domain.provenance import REVISION_FIELDS, Provenance
from omniqual.domain.result import GateResult
from omniqual.domain.rules import CurrentGate, Revisions, known_revisions

__all__ = ["Reading", "RowDeployment", "row_deployments"]


@dataclass(frozen=True, slots=True)
class Reading:
    """One recorded result as the selection reads it."""

    gate_id: str
    gate_kind: str
    outcome: GateOutcome
    result_id: str
    run_id: str
    finished_at: datetime
    revisions: Revisions
    measurements: Mapping[str, float]
    link: str = ""

    @property
    def ref(self) -> str:
        return self.link or self.result_id


@dataclass(frozen=True, slots=True)
class RowDeployment:
    """A compiled row as the recommendation reads it."""

    row: str
    recipe: str | None
    state: CellState
    reasons: tuple[str, ...]
    """The compiled row's reasons (why it is `not tested`, what limits it)."""
    limitation: str | None
    wanted: tuple[str, ...]
    """The Definition of Done's gates for a recommended deployment of this kind of row."""
    supporting: tuple[Reading, ...]
    """The results its state rests on, as compiled (one deployment)."""
    beside: tuple[Reading, ...] = ()
    """Per other gate, the latest current conclusive result on that same deployment."""
    unread: tuple[str, ...] = ()
    """Result ids of the compiled evidence that were not among the results given."""


def _revisions(provenance: Provenance) -> Revisions:
    return known_revisions(tuple(getattr(provenance, name) for name in REVISION_FIELDS))


def _current(result: GateResult, gates: Mapping[str, CurrentGate], target: Revisions) -> bool:
    """Whether the rule table would read ``result`` at all: conclusive, not startup-only, of
    the gate's current version and spec hash, and at every pinned revision (as
    ``rules._usable`` decides it)."""
    if result.startup_only or not result.outcome.conclusive:
        return False
    gate = gates.get(result.gate_id)
    if gate is not None and result.gate_version != gate.version:
        return False
    if gate is not None and gate.spec_sha256 is not None and result.gate_spec_sha256 not in (
        None, gate.spec_sha256,
    ):  # fmt: skip
        return False
    revisions = _revisions(result.provenance)
    return all(t is None or t == r for t, r in zip(target, revisions, strict=True))


def _reading(result: GateResult, link: str) -> Reading:
    return Reading(
        result.gate_id, result.gate_kind, result.outcome, result.result_id, result.run_id,
        result.finished_at, _revisions(result.provenance),
        {m.name: m.value for m in result.measurements}, link,
    )  # fmt: skip


@dataclass(slots=True)
class _Held:
    supporting: dict[tuple[str, str], Reading]
    latest: dict[tuple[str, Revisions], Reading]


def row_deployments(
    loaded: LoadedMatrix, gates: Mapping[str, CurrentGate], compiled: CompiledMatrix,
    results: Iterable[tuple[GateResult, str]],
) -> list[RowDeployment]:  # fmt: skip
    """Each compiled row (in its order) with its state and the results of its deployment, from
    located results (result, link). ``compiled`` must be compiled from ``loaded``, ``gates``
    and these results (or the runs they were read from)."""
    wanted = {(e.run_id, e.result_id) for row in compiled.rows for e in row.evidence}
    held = {row.key: _Held({}, {}) for row in compiled.rows}
    target = target_revisions(loaded)
    for result, link in results:
        row = held.get(result.row)
        if row is None:
            continue
        ref = (result.run_id, result.result_id)
        if ref in wanted:
            row.supporting[ref] = _reading(result, link)
        elif _current(result, gates, target):
            # Only the latest of a gate on a deployment can matter: keep that one, not every run.
            key = (result.gate_id, _revisions(result.provenance))
            kept = row.latest.get(key)
            if kept is None or result.finished_at >= kept.finished_at:
                row.latest[key] = _reading(result, link)
    planned = {str(row.key): row for row in loaded.rows}
    return [_deployment(row, loaded, planned.get(row.key), held[row.key]) for row in compiled.rows]


def _deployment(
    row: CompiledRow, loaded: LoadedMatrix, planned: PlannedRow | None, held: _Held
) -> RowDeployment:
    supporting = tuple(held.supporting[(e.run_id, e.result_id)] for e in row.evidence
                       if (e.run_id, e.result_id) in held.supporting)  # fmt: skip
    unread = tuple(e.result_id for e in row.evidence
                   if (e.run_id, e.result_id) not in held.supporting)  # fmt: skip
    deployments = {r.revisions for r in supporting}
    beside: dict[str, Reading] = {}
    if len(deployments) == 1:
        # A result naming no deployment is of none we can tell (the rule table's "unknown never
        # equals unknown"): it is no evidence about this one, for or against.
        (revisions,) = deployments
        gates = {r.gate_id for r in supporting}
        beside = {gate: reading for (gate, at), reading in held.latest.items()
                  if at == revisions and gate not in gates}  # fmt: skip
    wanted = () if planned is None else recommendation_gates(
        kind_of(planned.spec.parent_row), loaded.candidate_axes(planned))
    return RowDeployment(
        row=row.key, recipe=planned.spec.recipe if planned is not None else None, state=row.state,
        reasons=row.reasons, limitation=row.limitation, wanted=wanted, supporting=supporting,
        beside=tuple(beside[g] for g in sorted(beside)), unread=unread,
    )  # fmt: skip
