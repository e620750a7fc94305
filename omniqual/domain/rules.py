"""The one rule table that derives a row's state from its evidence.

Pure and total: given a row's requirements and every recorded result for that exact row key, it
returns the state and the reasons. Nothing else in omniqual decides a state.

Order of the table (first match wins):

====  =====================================================================  ===============
 #    condition on the usable evidence                                        state
====  =====================================================================  ===============
 1    every ``unsupported_by`` gate passed AND (every ``requires`` gate        not tested
      passed, or the declared ``limited`` gates passed): conflicting
 2    the results the state would rest on (rows 3-6) differ in a revision      not tested
      (checkpoint, model revision, vLLM-Omni version/commit, serve config,
      served identity; unknown differs from every known value), or there
      are several and they name no deployment (no checkpoint, serve config
      or served identity: unknown never equals unknown): mixed evidence
 3    every ``requires`` gate's latest usable result passed, with artifacts,    validated
      and none carries a reproduced contract deviation
 4    as 3, but some of those results carry reproduced deviations             limited
      (the deviations are the limitation)
 5    a limitation is declared, every ``limited.requires`` gate passed and      limited
      every ``limited.rejection`` gate passed, all with artifacts (their
      reproduced deviations are added to the limitation), and no other
      ``requires`` gate's latest usable result failed
 6    every ``unsupported_by`` (fail-fast) gate passed, with artifacts         unsupported
 7    otherwise                                                                not tested
====  =====================================================================  ===============

Usable evidence: conclusive results (passed/failed) whose gate version and spec content hash are
the current ones (the hash covers the gate spec and every contract or load mapping it reads) and
whose revisions match every revision the target pins. Per gate only the latest usable result
counts, so a later failure demotes. Results dropped as stale are counted in ``Derivation.stale``.

Linked passes: a measured gate's pass says nothing of a deployment that computes the wrong thing
fast, so a gate named in ``RowRequirements.linked`` (by default ``perf``, see
:data:`LINKED_CORRECTNESS`) counts as passed only when one of its correctness gates
(``reference-parity`` on a baseline row, ``parity`` on a candidate row) has a latest usable
result that passed, with artifacts, on the same revisions (checkpoint, serve config, served
identity ...): the same deployment. Otherwise it is a gap, as a missing result is (rows 3-5).

A limitation states only what it limits: a required gate outside the limited ones that has not
run leaves room for row 5, but one that failed keeps the consequence it has in a row without a
``limited`` block (rows 6 and 7 decide).

Parent evidence: a candidate row (one axis away from its ``parent_row``, see
:mod:`omniqual.domain.definition_of_done`) proves with ``parity`` only that it computes what its
parent computes, which means something only if the parent is right. So rows 3-5 apply to a
candidate only when ``RowRequirements.parent`` shows no gap: the parent's correctness gate
(``reference-parity`` for a baseline parent; ``parity``, and in turn its own parent's, for a
candidate parent) has a latest usable result that passed, with artifacts. Otherwise the
candidate is `not tested`, its first reason naming the parent; a refusal (row 6) needs no parent.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.domain.provenance import IDENTITY_FIELDS, REVISION_FIELDS

# What the table reads lives in rule_inputs; importers know these names from here.
from omniqual.domain.rule_inputs import UNKNOWN_VALUES as UNKNOWN_VALUES
from omniqual.domain.rule_inputs import CurrentGate as CurrentGate
from omniqual.domain.rule_inputs import EvidenceItem as EvidenceItem
from omniqual.domain.rule_inputs import Revisions as Revisions
from omniqual.domain.rule_inputs import known_revisions as known_revisions

LINKED_CORRECTNESS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("perf", ("reference-parity", "parity")),
)
"""(gate, correctness gates): the gate's pass counts only beside a pass of one of them on the
same deployment."""


@dataclass(frozen=True, slots=True)
class ParentEvidence:
    """What a candidate row's parent has shown of its own correctness."""

    row: str
    """The parent row's key."""
    gap: str | None = None
    """Why the parent's correctness gate (or its own parent's) has no latest usable pass;
    None when it has one."""


@dataclass(frozen=True, slots=True)
class RowRequirements:
    """What a matrix definition asks of one row."""

    requires: tuple[str, ...] = ()
    limitation: str | None = None
    limited_requires: tuple[str, ...] = ()
    limited_rejection: tuple[str, ...] = ()
    unsupported_by: tuple[str, ...] = ()
    linked: tuple[tuple[str, tuple[str, ...]], ...] = LINKED_CORRECTNESS
    parent: ParentEvidence | None = None
    """A candidate row's parent (None: a baseline row, which rests on its own evidence)."""


@dataclass(frozen=True, slots=True)
class Derivation:
    state: CellState
    reasons: tuple[str, ...]
    supporting: tuple[str, ...] = field(default=())
    """result ids the state rests on."""
    stale: int = 0
    """Results ignored because their gate spec, its inputs or a pinned revision changed."""
    limitation: str | None = None
    """For a `limited` state: what bounds it (declared, or the reproduced deviations)."""


@dataclass(slots=True)
class _Usable:
    latest: dict[str, EvidenceItem]
    notes: list[str]
    stale: int


MAX_STALE_DETAILS = 3
"""Distinct mismatches one stale note spells out; the rest are counted."""


def _stale_note(why: str, details: Mapping[str, int]) -> str | None:
    """``N result(s) ignored as stale (why): field: value, result has value; ...``: a user can
    see which pin or spec to change, or which evidence to re-measure."""
    if not details:
        return None
    total = sum(details.values())
    ordered = sorted(details.items(), key=lambda kv: (-kv[1], kv[0]))
    counted = len(ordered) > 1
    shown = [f"{d} ({n})" if counted else d for d, n in ordered[:MAX_STALE_DETAILS]]
    rest = len(ordered) - MAX_STALE_DETAILS
    more = f"; and {rest} other mismatches" if rest > 0 else ""
    return f"{total} result(s) ignored as stale ({why}): {'; '.join(shown)}{more}"


def _had(value: str | None) -> str:
    return "none" if value is None else _shown(value, 12)


def _spec_mismatch(item: EvidenceItem, current: CurrentGate | None) -> str | None:
    """What about the gate's spec changed since ``item`` was recorded, or None."""
    if current is None:
        return None
    if item.gate_version != current.version:
        return (f"{item.gate_id} gate_version: current {current.version}, result has "
                f"{item.gate_version}")  # fmt: skip
    if current.spec_sha256 is not None and item.spec_sha256 not in (None, current.spec_sha256):
        return (f"{item.gate_id} gate_spec_sha256: current {_had(current.spec_sha256)}, "
                f"result has {_had(item.spec_sha256)}")  # fmt: skip
    return None


def _revision_mismatch(item: EvidenceItem, target: Revisions) -> str | None:
    """Every pinned revision ``item`` disagrees with, with both values, or None."""
    differing = [
        f"{name}: pinned {_had(t)}, result has {_had(r)}"
        for name, t, r in zip(REVISION_FIELDS, target, item.revisions, strict=True)
        if t is not None and t != r
    ]
    return "; ".join(differing) or None


def _usable(
    items: Iterable[EvidenceItem], gates: Mapping[str, CurrentGate], target: Revisions
) -> _Usable:
    latest: dict[str, EvidenceItem] = {}
    old_spec: dict[str, int] = {}
    other_revision: dict[str, int] = {}
    unhashed = inconclusive = 0
    for item in items:
        current = gates.get(item.gate_id)
        changed = _spec_mismatch(item, current)
        if changed is not None:
            old_spec[changed] = old_spec.get(changed, 0) + item.count
            continue
        if current is not None and current.spec_sha256 is not None and item.spec_sha256 is None:
            unhashed += item.count
        moved = _revision_mismatch(item, target)
        if moved is not None:
            other_revision[moved] = other_revision.get(moved, 0) + item.count
            continue
        if not item.outcome.conclusive:
            inconclusive += item.count
            continue
        held = latest.get(item.gate_id)
        if held is None or item.finished_at >= held.finished_at:
            latest[item.gate_id] = item
    notes = [
        note
        for note in (
            _stale_note("gate spec, contract or mapping changed since", old_spec),
            _stale_note("not the pinned revision", other_revision),
        )
        if note is not None
    ]
    if unhashed:
        notes.append(f"{unhashed} result(s) without a recorded spec hash, judged by gate "
                     "version only")  # fmt: skip
    if inconclusive:
        notes.append(f"{inconclusive} invalid/errored/skipped result(s) are not evidence")
    return _Usable(latest, notes, sum(old_spec.values()) + sum(other_revision.values()))


def _unlinked(
    item: EvidenceItem, correctness: tuple[str, ...], latest: Mapping[str, EvidenceItem]
) -> str | None:
    """Why ``item``'s pass does not count beside its correctness gates, or None when one of
    them passed (with artifacts) on the same revisions."""
    seen: list[str] = []
    for gate in correctness:
        other = latest.get(gate)
        if other is None:
            seen.append(f"{gate} has no usable result")
        elif other.outcome is not GateOutcome.PASSED or not other.has_artifacts:
            seen.append(f"{gate} did not pass")
        elif other.revisions != item.revisions:
            seen.append(f"{gate} passed on another deployment")
        else:
            return None
    return ("passed, but a measured pass counts only beside a passed correctness gate of the "
            f"same deployment: {'; '.join(seen)}")  # fmt: skip


def _all_pass(
    gates: tuple[str, ...], latest: Mapping[str, EvidenceItem], missing: list[str],
    links: Mapping[str, tuple[str, ...]] | None = None,
) -> bool:  # fmt: skip
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
        elif links and gate in links and (unlinked := _unlinked(item, links[gate], latest)):
            missing.append(f"{gate}: {unlinked}")
            ok = False
    return ok


def _shown(value: str | None, keep: int = 16) -> str:
    if value is None:
        return "unknown"
    return value if len(value) <= 40 else f"{value[:keep]}…"


def mixed_revisions(items: Sequence[EvidenceItem]) -> str | None:
    """The reason, when ``items`` were not all measured on the same checkpoint and server:
    each result's gate with the revisions that differ between them."""
    if len({i.revisions for i in items}) <= 1:
        return None
    differing = [k for k in range(len(REVISION_FIELDS)) if len({i.revisions[k] for i in items}) > 1]
    listed = [
        f"{i.gate_id} ("
        + ", ".join(f"{REVISION_FIELDS[k]}={_shown(i.revisions[k])}" for k in differing)
        + ")"
        for i in sorted(items, key=lambda i: i.gate_id)
    ]
    return "evidence from different checkpoints/servers: " + "; ".join(listed)


_IDENTITY = tuple(REVISION_FIELDS.index(name) for name in IDENTITY_FIELDS)


def unidentified(items: Sequence[EvidenceItem]) -> str | None:
    """The reason, when several ``items`` name no deployment: two results that both say
    "unknown" may come from two servers, so they are never taken as one."""
    if len(items) < 2:
        return None
    blind = sorted(i.gate_id for i in items if all(i.revisions[k] is None for k in _IDENTITY))
    if not blind:
        return None
    return ("evidence from deployments nobody can tell apart (no checkpoint, serve config or "
            f"served identity recorded): {', '.join(blind)}")  # fmt: skip


def _deviations(items: Sequence[EvidenceItem]) -> tuple[str, ...]:
    return tuple(sorted({d for i in items for d in i.limitations}))


def _failed_outside(
    requires: tuple[str, ...], limited: tuple[str, ...], latest: Mapping[str, EvidenceItem]
) -> list[str]:
    """Required gates, other than the limited ones, whose latest usable result failed."""
    return [
        gate
        for gate in requires
        if gate not in limited
        and (found := latest.get(gate)) is not None
        and found.outcome is GateOutcome.FAILED
    ]


def correctness_gap(
    gate: str,
    evidence: Iterable[EvidenceItem],
    gates: Mapping[str, CurrentGate],
    target: Revisions | None = None,
) -> str | None:
    """Why ``gate`` has no latest usable result that passed with artifacts among a row's
    ``evidence`` (``gate: no usable result``, ``gate: latest result failed (...)``), or None
    when it has one. Usable as in :func:`derive_state`."""
    pins = known_revisions(target) if target is not None else (None,) * len(REVISION_FIELDS)
    gaps: list[str] = []
    _all_pass((gate,), _usable(evidence, gates, pins).latest, gaps)
    return gaps[0] if gaps else None


def _parent_gap(parent: ParentEvidence | None) -> str | None:
    if parent is None or parent.gap is None:
        return None
    return (f"parent row {parent.row}: {parent.gap} (a candidate counts only beside its "
            "parent's own correctness evidence)")  # fmt: skip


def derive_state(
    requirements: RowRequirements,
    evidence: Iterable[EvidenceItem],
    gates: Mapping[str, CurrentGate],
    target: Revisions | None = None,
) -> Derivation:
    """Derive one row's state. ``target`` holds the pinned revisions (None = unpinned)."""
    pins = known_revisions(target) if target is not None else (None,) * len(REVISION_FIELDS)
    usable = _usable(evidence, gates, pins)
    latest, notes, stale = usable.latest, usable.notes, usable.stale

    def items(names: tuple[str, ...]) -> tuple[EvidenceItem, ...]:
        return tuple(latest[g] for g in names)

    def claim(
        state: CellState, names: tuple[str, ...], reason: str | None, limitation: str | None = None
    ) -> Derivation:
        behind = items(names)
        mix = mixed_revisions(behind) or unidentified(behind)
        if mix is not None:
            return Derivation(CellState.NOT_TESTED, (mix, *notes), stale=stale)
        head = (reason,) if reason else ()
        supporting = tuple(i.result_id for i in behind)
        return Derivation(state, (*head, *notes), supporting, stale, limitation)

    links = dict(requirements.linked)
    gaps_validated: list[str] = []
    validated = _all_pass(requirements.requires, latest, gaps_validated, links)
    gaps_unsupported: list[str] = []
    unsupported = _all_pass(requirements.unsupported_by, latest, gaps_unsupported)
    gaps_limited: list[str] = []
    limited_gates = requirements.limited_requires + requirements.limited_rejection
    limited = bool(requirements.limitation) and (
        _all_pass(requirements.limited_requires, latest, gaps_limited, links)
        & _all_pass(requirements.limited_rejection, latest, gaps_limited)
    )
    uncovered = _failed_outside(requirements.requires, limited_gates, latest)
    if limited and uncovered:
        limited = False
        gaps_limited.append(f"{', '.join(uncovered)} failed, which the limitation does not cover")
    if unsupported and (validated or limited):
        what = "passed its gates" if validated else "passed its limited gates"
        why = f"conflicting evidence: the row both {what} and was shown to be rejected"
        return Derivation(CellState.NOT_TESTED, (why, *notes), stale=stale)
    orphaned = _parent_gap(requirements.parent)
    if orphaned is not None:
        validated = limited = False
    if validated:
        deviations = _deviations(items(requirements.requires))
        if not deviations:
            return claim(CellState.VALIDATED, requirements.requires, None)
        text = "; ".join(deviations)
        return claim(CellState.LIMITED, requirements.requires, f"limitation: {text}", text)
    if limited:
        assert requirements.limitation is not None
        text = "; ".join((requirements.limitation, *_deviations(items(limited_gates))))
        return claim(CellState.LIMITED, limited_gates, f"limitation: {text}", text)
    if unsupported:
        proof = ", ".join(requirements.unsupported_by)
        why = f"refused early with an actionable error, as proven by: {proof}"
        return claim(CellState.UNSUPPORTED, requirements.unsupported_by, why)
    reasons = [orphaned] if orphaned is not None else []
    reasons += gaps_validated
    if requirements.limitation:
        reasons += [f"limited: {gap}" for gap in gaps_limited]
    reasons += [f"unsupported: {gap}" for gap in gaps_unsupported]
    if not reasons:
        reasons = ["no gate is required for this row"]
    return Derivation(CellState.NOT_TESTED, (*reasons, *notes), stale=stale)
