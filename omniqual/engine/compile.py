"""Compile a matrix: every planned row's state, derived by the rule table from recorded results."""

import gc
import operator
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from omniqual.domain.matrix import CompiledMatrix, CompiledRow, EvidenceRef
from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.domain.provenance import REVISION_FIELDS, Provenance
from omniqual.domain.result import GateResult
from omniqual.domain.rules import (
    UNKNOWN_VALUES,
    CurrentGate,
    EvidenceItem,
    Revisions,
    RowRequirements,
    derive_state,
)
from omniqual.engine.digest import ProvenanceDigest, ResultDigest
from omniqual.specs.matrix import LoadedMatrix, PlannedRow


@dataclass(frozen=True, slots=True)
class LocatedResult:
    """A result (full, or its digest) and the link (relative to the output) to its record."""

    result: GateResult | ResultDigest
    link: str


def requirements_of(row: PlannedRow) -> RowRequirements:
    limited = row.spec.limited
    return RowRequirements(
        requires=row.spec.requires,
        limitation=limited.limitation if limited else None,
        limited_requires=limited.requires if limited else (),
        limited_rejection=limited.rejection if limited else (),
        unsupported_by=row.spec.unsupported_by,
    )


_REVISIONS = operator.attrgetter(*REVISION_FIELDS)


def _revisions(provenance: Provenance | ProvenanceDigest) -> Revisions:
    """The recorded revisions, "unknown" (as a URL target may report) read as None."""
    values: Revisions = _REVISIONS(provenance)
    if UNKNOWN_VALUES.isdisjoint(values):
        return values
    return tuple(None if v in UNKNOWN_VALUES else v for v in values)


@dataclass(frozen=True, slots=True)
class _Held:
    """What compile keeps of one result: the rule table's view plus where to link."""

    item: EvidenceItem
    artifacts: tuple[str, ...]
    link: str


Bucket = tuple[str, int, str | None, Revisions, bool]


def _bucket(located: LocatedResult) -> Bucket:
    """Results the rule table cannot tell apart except by time (outcome, reasons and
    limitations only matter for the latest conclusive result of a gate): only the latest of
    each bucket can ever decide a state, so compile keeps that one and a count of the rest."""
    r = located.result
    return (r.gate_id, r.gate_version, r.gate_spec_sha256, _revisions(r.provenance),
            r.outcome.conclusive and not r.startup_only)  # fmt: skip


_LEGACY_STARTUP = ("startup-only result (an older record): never promotes",)


def _hold(located: LocatedResult, bucket: Bucket, count: int) -> _Held:
    r = located.result
    # Results of older releases may be flagged startup-only; they were never meant to promote.
    outcome, reasons = (GateOutcome.SKIPPED, _LEGACY_STARTUP) if r.startup_only else (
        r.outcome, r.reasons[:3])  # fmt: skip
    item = EvidenceItem(
        result_id=r.result_id,
        run_id=r.run_id,
        gate_id=r.gate_id,
        gate_version=r.gate_version,
        outcome=outcome,
        finished_at=r.finished_at,
        has_artifacts=bool(r.artifacts),
        revisions=bucket[3],
        # Held items of a gate share one spec hash string, not one copy per result.
        spec_sha256=r.gate_spec_sha256 and sys.intern(r.gate_spec_sha256),
        limitations=r.limitations,
        reasons=reasons,
        count=count,
    )
    return _Held(item, tuple(a.sha256 for a in r.artifacts), located.link)


def compile_matrix(
    matrix: LoadedMatrix,
    gates: Mapping[str, CurrentGate],
    results: Iterable[LocatedResult],
    *,
    evidence_dirs: Sequence[Path] = (),
    now: datetime | None = None,
) -> CompiledMatrix:
    """Stream ``results`` once, keeping only a compact view of those on planned rows."""
    by_row: dict[str, dict[Bucket, _Held]] = {str(row.key): {} for row in matrix.rows}
    runs: set[str] = set()
    # Millions of small, acyclic objects: the cyclic collector would rescan them over and over.
    collecting = gc.isenabled()
    gc.disable()
    try:
        for located in results:
            held = by_row.get(located.result.row)
            if held is None:
                continue
            runs.add(located.result.run_id)
            bucket = _bucket(located)
            kept = held.get(bucket)
            if kept is None:
                held[bucket] = _hold(located, bucket, 1)
            elif located.result.finished_at >= kept.item.finished_at:
                held[bucket] = _hold(located, bucket, kept.item.count + 1)
            else:
                held[bucket] = _Held(
                    replace(kept.item, count=kept.item.count + 1), kept.artifacts, kept.link
                )
    finally:
        if collecting:
            gc.enable()
    rows = [
        _compile_row(row, list(by_row[str(row.key)].values()), matrix, gates) for row in matrix.rows
    ]
    rows.sort(key=lambda r: r.key)
    return CompiledMatrix(
        name=matrix.definition.name,
        title=matrix.definition.title or matrix.definition.name,
        axes=matrix.catalog.names(),
        compiled_at=now or datetime.now(UTC),
        evidence_dirs=tuple(str(d) for d in evidence_dirs),
        runs=tuple(sorted(runs)),
        rows=tuple(rows),
    )


def _compile_row(
    row: PlannedRow,
    held: list[_Held],
    matrix: LoadedMatrix,
    gates: Mapping[str, CurrentGate],
) -> CompiledRow:
    requirements = requirements_of(row)
    # Only what the matrix pins: unpinned revisions are never completed from some result, the
    # rule table instead demands that the results behind a state agree on all of them.
    target = _revisions(matrix.definition.target)
    derivation = derive_state(requirements, (h.item for h in held), gates, target)
    by_id = {h.item.result_id: h for h in held}
    evidence = tuple(
        EvidenceRef(
            run_id=by_id[rid].item.run_id,
            result_id=rid,
            gate_id=by_id[rid].item.gate_id,
            outcome=by_id[rid].item.outcome.value,
            artifacts=by_id[rid].artifacts,
            link=by_id[rid].link,
        )
        for rid in derivation.supporting
    )
    latest: dict[str, EvidenceItem] = {}
    for h in sorted(held, key=lambda h: h.item.finished_at):
        latest[h.item.gate_id] = h.item
    return CompiledRow(
        key=str(row.key),
        axes=row.key.as_dict(),
        state=derivation.state,
        reasons=derivation.reasons,
        required_gates=requirements.requires,
        limitation=(
            derivation.limitation
            if derivation.state is CellState.LIMITED
            else requirements.limitation
        ),
        evidence=evidence,
        gate_outcomes={gate: i.outcome.value for gate, i in sorted(latest.items())},
        declared=row.spec.declared,
        note=row.spec.note,
        stale=derivation.stale,
    )
