"""The one rule table that derives a row's state from its evidence.

Pure and total: given a row's requirements and every recorded result for that exact row key, it
returns the state and the reasons. Nothing else in omniqual decides a state.

Order of the table (first match wins):

====  =====================================================================  ===============
 #    condition on the usable evidence                                        state
====  =====================================================================  ===============
 1    validated AND unsupported conditions both hold                           not tested
 2    every ``requires`` gate's latest conclusive result passed, with           validated
      artifacts
 3    a limitation is declared, every ``limited.requires`` gate passed and      limited
      every ``limited.rejection`` gate passed, all with artifacts
 4    every ``unsupported_by`` (fail-fast) gate passed, with artifacts         unsupported
 5    otherwise                                                                not tested
====  =====================================================================  ===============

Usable evidence: results whose gate version is current, whose revisions match the target, that
are conclusive (passed/failed) and not startup-only. Per gate only the latest usable result
counts, so a later failure demotes.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from omniqual.domain.outcomes import CellState, GateOutcome

Revisions = tuple[str | None, ...]


@dataclass(frozen=True, slots=True)
class RowRequirements:
    """What a matrix definition asks of one row."""

    requires: tuple[str, ...] = ()
    limitation: str | None = None
    limited_requires: tuple[str, ...] = ()
    limited_rejection: tuple[str, ...] = ()
    unsupported_by: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class EvidenceItem:
    """The part of a GateResult the rule table reads."""

    result_id: str
    run_id: str
    gate_id: str
    gate_version: int
    outcome: GateOutcome
    finished_at: datetime
    has_artifacts: bool
    startup_only: bool = False
    revisions: Revisions = ()
    reasons: tuple[str, ...] = ()
    count: int = 1
    """How many recorded results this item stands for (compile keeps only the latest of
    results that differ in nothing the table reads but time)."""


@dataclass(frozen=True, slots=True)
class Derivation:
    state: CellState
    reasons: tuple[str, ...]
    supporting: tuple[str, ...] = field(default=())
    """result ids the state rests on."""
    stale: int = 0


def _usable(
    items: Iterable[EvidenceItem],
    gate_versions: Mapping[str, int],
    target: Revisions,
    notes: list[str],
) -> dict[str, EvidenceItem]:
    latest: dict[str, EvidenceItem] = {}
    stale = startup = inconclusive = 0
    for item in items:
        current = gate_versions.get(item.gate_id)
        if current is not None and item.gate_version != current:
            stale += item.count
            continue
        if any(t is not None and t != r for t, r in zip(target, item.revisions, strict=False)):
            stale += item.count
            continue
        if item.startup_only:
            startup += item.count
            continue
        if not item.outcome.conclusive:
            inconclusive += item.count
            continue
        held = latest.get(item.gate_id)
        if held is None or item.finished_at >= held.finished_at:
            latest[item.gate_id] = item
    if stale:
        notes.append(f"{stale} result(s) ignored as stale (other gate version or revision)")
    if startup:
        notes.append(f"{startup} startup-only result(s) never promote")
    if inconclusive:
        notes.append(f"{inconclusive} invalid/errored/skipped result(s) are not evidence")
    return latest


def _all_pass(
    gates: tuple[str, ...], latest: Mapping[str, EvidenceItem], missing: list[str]
) -> bool:
    ok = bool(gates)
    for gate in gates:
        item = latest.get(gate)
        if item is None:
            missing.append(f"{gate}: no usable result")
            ok = False
        elif item.outcome is not GateOutcome.PASSED:
            why = "; ".join(item.reasons[:3]) or "no reason recorded"
            missing.append(f"{gate}: latest result {item.outcome.value} ({why})")
            ok = False
        elif not item.has_artifacts:
            missing.append(f"{gate}: passed without artifacts")
            ok = False
    return ok


def derive_state(
    requirements: RowRequirements,
    evidence: Iterable[EvidenceItem],
    gate_versions: Mapping[str, int],
    target: Revisions = (),
) -> Derivation:
    """Derive one row's state. ``target`` holds the pinned revisions (None = unpinned)."""
    notes: list[str] = []
    latest = _usable(evidence, gate_versions, target, notes)

    def support(gates: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(latest[g].result_id for g in gates)

    gaps_validated: list[str] = []
    validated = _all_pass(requirements.requires, latest, gaps_validated)
    gaps_unsupported: list[str] = []
    unsupported = _all_pass(requirements.unsupported_by, latest, gaps_unsupported)
    if validated and unsupported:
        return Derivation(
            CellState.NOT_TESTED,
            (
                "conflicting evidence: the row both passed its gates and was shown to be rejected",
                *notes,
            ),
        )
    if validated:
        return Derivation(CellState.VALIDATED, tuple(notes), support(requirements.requires))
    gaps_limited: list[str] = []
    if requirements.limitation:
        subset = _all_pass(requirements.limited_requires, latest, gaps_limited)
        rejection = _all_pass(requirements.limited_rejection, latest, gaps_limited)
        if subset and rejection:
            gates = requirements.limited_requires + requirements.limited_rejection
            return Derivation(
                CellState.LIMITED,
                (f"limitation: {requirements.limitation}", *notes),
                support(gates),
            )
    if unsupported:
        proof = ", ".join(requirements.unsupported_by)
        return Derivation(
            CellState.UNSUPPORTED,
            (f"refused early with an actionable error, as proven by: {proof}", *notes),
            support(requirements.unsupported_by),
        )
    reasons = list(gaps_validated)
    if requirements.limitation:
        reasons += [f"limited: {gap}" for gap in gaps_limited]
    reasons += [f"unsupported: {gap}" for gap in gaps_unsupported]
    if not reasons:
        reasons = ["no gate is required for this row"]
    return Derivation(CellState.NOT_TESTED, (*reasons, *notes))
