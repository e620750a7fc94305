"""Compile a matrix: every planned row's state, derived by the rule table from recorded results."""

import gc
import operator
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from omniqual.compile.construct import constructor
from omniqual.compile.hosts import HostCheck, host_notes
from omniqual.compile.parents import parent_evidence
from omniqual.domain.matrix import (
    CompiledMatrix,
    CompiledRow,
    EvidenceRef,
    LoadedMatrix,
    PlannedRow,
)
from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.domain.provenance import REVISION_FIELDS, Provenance
from omniqual.domain.result import GateResult
from omniqual.domain.rules import (
    UNKNOWN_VALUES,
    CurrentGate,
    EvidenceItem,
    ParentEvidence,
    Revisions,
    RowRequirements,
    derive_state,
)
from omniqual.evidence.digest import ProvenanceDigest, ResultDigest


@dataclass(frozen=True, slots=True)
class LocatedResult:
    """A result (full, or its digest) and the link (relative to the output) to its record."""

    result: GateResult | ResultDigest
    link: str


def requirements_of(row: PlannedRow, parent: ParentEvidence | None = None) -> RowRequirements:
    """What the rule table asks of ``row``; ``parent``: a candidate row's parent evidence
    (``omniqual.compile.parents``)."""
    limited = row.spec.limited
    return RowRequirements(
        requires=row.spec.requires,
        limitation=limited.limitation if limited else None,
        limited_requires=limited.requires if limited else (),
        limited_rejection=limited.rejection if limited else (),
        unsupported_by=row.spec.unsupported_by,
        parent=parent,
    )


_REVISIONS = operator.attrgetter(*REVISION_FIELDS)


def _revisions(provenance: Provenance | ProvenanceDigest) -> Revisions:
    """The recorded revisions, "unknown" (as a URL target may report) read as None."""
    values: Revisions = _REVISIONS(provenance)
    if UNKNOWN_VALUES.isdisjoint(values):
        return values
    return tuple(None if v in UNKNOWN_VALUES else v for v in values)


@dataclass(frozen=True, slots=True)
class Held:
    """What compile keeps of one result: the rule table's view plus where to link."""

    item: EvidenceItem
    artifacts: tuple[str, ...]
    link: str

    def ref(self) -> EvidenceRef:
        i = self.item
        return EvidenceRef(
            run_id=i.run_id,
            result_id=i.result_id,
            gate_id=i.gate_id,
            outcome=i.outcome.value,
            artifacts=self.artifacts,
            link=self.link,
        )


Bucket = tuple[str, int, str | None, Revisions, bool]


def _bucket(located: LocatedResult) -> Bucket:
    """Results the rule table cannot tell apart except by time (outcome, reasons and
    limitations only matter for the latest conclusive result of a gate): only the latest of
    each bucket can ever decide a state, so compile keeps that one and a count of the rest."""
    r = located.result
    return (r.gate_id, r.gate_version, r.gate_spec_sha256, _revisions(r.provenance),
            r.outcome.conclusive and not r.startup_only)  # fmt: skip


LEGACY_STARTUP = ("startup-only result (an older record): never promotes",)


def _hold(located: LocatedResult, bucket: Bucket, count: int) -> Held:
    r = located.result
    # Results of older releases may be flagged startup-only; they were never meant to promote.
    outcome, reasons = (GateOutcome.SKIPPED, LEGACY_STARTUP) if r.startup_only else (
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
    return Held(item, tuple(a.sha256 for a in r.artifacts), located.link)


def compile_matrix(
    matrix: LoadedMatrix,
    gates: Mapping[str, CurrentGate],
    results: Iterable[LocatedResult],
    *,
    evidence_dirs: Sequence[Path] = (),
    now: datetime | None = None,
) -> CompiledMatrix:
    """Stream ``results`` once, keeping only a compact view of those on planned rows (and
    measured on a host that may be of the row's hardware)."""
    by_row: dict[str, dict[Bucket, Held]] = {str(row.key): {} for row in matrix.rows}
    hardware = {str(row.key): row.key.get("hardware") for row in matrix.rows}
    excluded: dict[str, dict[str, int]] = {}
    hosts = HostCheck()
    runs: set[str] = set()
    # Millions of small, acyclic objects: the cyclic collector would rescan them over and over.
    collecting = gc.isenabled()
    gc.disable()
    try:
        for located in results:
            held = by_row.get(located.result.row)
            if held is None:
                continue
            row_key = located.result.row
            measured = getattr(located.result, "measured_on", None)
            why = hosts.why(hardware[row_key], measured)
            if why is not None:
                counts = excluded.setdefault(row_key, {})
                counts[why] = counts.get(why, 0) + 1
                continue
            runs.add(located.result.run_id)
            bucket = _bucket(located)
            kept = held.get(bucket)
            if kept is None:
                held[bucket] = _hold(located, bucket, 1)
            elif located.result.finished_at >= kept.item.finished_at:
                held[bucket] = _hold(located, bucket, kept.item.count + 1)
            else:
                held[bucket] = Held(
                    replace(kept.item, count=kept.item.count + 1), kept.artifacts, kept.link
                )
    finally:
        if collecting:
            gc.enable()
    per_row = [list(by_row[str(row.key)].values()) for row in matrix.rows]
    notes = [host_notes(excluded.get(str(row.key))) for row in matrix.rows]
    dirs = tuple(str(d) for d in evidence_dirs)
    return assemble(matrix, gates, per_row, sorted(runs), evidence_dirs=dirs, now=now,
                    notes=notes)  # fmt: skip


def assemble(
    matrix: LoadedMatrix,
    gates: Mapping[str, CurrentGate],
    held: Sequence[list[Held]],
    runs: Sequence[str],
    *,
    evidence_dirs: Sequence[str] = (),
    now: datetime | None = None,
    notes: Sequence[tuple[str, ...]] | None = None,
) -> CompiledMatrix:
    """The compiled matrix from what was held per planned row (``held[i]`` for row i, in the
    order each bucket was first seen); ``notes[i]``: row i's reasons for results not held."""
    extra = notes if notes is not None else [()] * len(matrix.rows)
    target = target_revisions(matrix)
    parents = parent_evidence(matrix, lambda i: (h.item for h in held[i]), gates, target)
    rows = [
        _compile_row(row, h, gates, target, n, p)
        for row, h, n, p in zip(matrix.rows, held, extra, parents, strict=True)
    ]
    return finish_matrix(matrix, rows, runs, evidence_dirs=evidence_dirs, now=now)


def finish_matrix(
    matrix: LoadedMatrix,
    rows: list[CompiledRow],
    runs: Sequence[str],
    *,
    evidence_dirs: Sequence[str] = (),
    now: datetime | None = None,
) -> CompiledMatrix:
    rows.sort(key=lambda r: r.key)
    return CompiledMatrix(
        name=matrix.definition.name,
        title=matrix.definition.title or matrix.definition.name,
        axes=matrix.catalog.names(),
        compiled_at=now or datetime.now(UTC),
        evidence_dirs=tuple(evidence_dirs),
        runs=tuple(runs),
        rows=tuple(rows),
    )


_ROW = constructor(CompiledRow, {
    "key": "k", "axes": {"a": "b"}, "state": CellState.NOT_TESTED, "reasons": (),
    "required_gates": (), "limitation": None, "evidence": (), "gate_outcomes": {},
    "declared": None, "note": "", "stale": 0,
})  # fmt: skip


@dataclass(frozen=True, slots=True)
class RowTemplate:
    """A row's derivation, with its evidence as positions in the row's held list: rows whose
    held lists agree in everything the rule table reads share one (see classes)."""

    state: CellState
    reasons: tuple[str, ...]
    limitation: str | None
    stale: int
    supporting: tuple[int, ...]
    gate_outcomes: dict[str, str]


def target_revisions(matrix: LoadedMatrix) -> Revisions:
    # Only what the matrix pins: unpinned revisions are never completed from some result, the
    # rule table instead demands that the results behind a state agree on all of them.
    return _revisions(matrix.definition.target)


def derive_template(
    requirements: RowRequirements,
    held: Sequence[Held],
    gates: Mapping[str, CurrentGate],
    target: Revisions,
) -> RowTemplate:
    derivation = derive_state(requirements, (h.item for h in held), gates, target)
    position = {h.item.result_id: p for p, h in enumerate(held)}
    latest: dict[str, EvidenceItem] = {}
    for h in sorted(held, key=lambda h: h.item.finished_at):
        latest[h.item.gate_id] = h.item
    return RowTemplate(
        state=derivation.state,
        reasons=derivation.reasons,
        limitation=(
            derivation.limitation
            if derivation.state is CellState.LIMITED
            else requirements.limitation
        ),
        stale=derivation.stale,
        supporting=tuple(position[rid] for rid in derivation.supporting),
        gate_outcomes={gate: i.outcome.value for gate, i in sorted(latest.items())},
    )


def build_row(
    row: PlannedRow,
    key: str,
    requirements: RowRequirements,
    template: RowTemplate,
    evidence: tuple[EvidenceRef, ...],
    notes: tuple[str, ...] = (),
) -> CompiledRow:
    # Built from the compile's own values (no input to check): constructing without validation
    # keeps the shared strings shared instead of copying them into every one of 100k rows.
    return _ROW(
        key=key,
        axes=row.key.all_values(),
        state=template.state,
        reasons=(*template.reasons, *notes) if notes else template.reasons,
        required_gates=requirements.requires,
        limitation=template.limitation,
        evidence=evidence,
        gate_outcomes=dict(template.gate_outcomes),
        declared=row.spec.declared,
        note=row.spec.note,
        stale=template.stale,
    )


def _compile_row(
    row: PlannedRow,
    held: list[Held],
    gates: Mapping[str, CurrentGate],
    target: Revisions,
    notes: tuple[str, ...] = (),
    parent: ParentEvidence | None = None,
) -> CompiledRow:
    requirements = requirements_of(row, parent)
    template = derive_template(requirements, held, gates, target)
    evidence = tuple(held[p].ref() for p in template.supporting)
    return build_row(row, str(row.key), requirements, template, evidence, notes)
