"""Compile a matrix: every planned row's state, derived by the rule table from recorded results."""

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from omniqual.domain.matrix import CompiledMatrix, CompiledRow, EvidenceRef
from omniqual.domain.provenance import REVISION_FIELDS, Provenance
from omniqual.domain.result import GateResult
from omniqual.domain.rules import EvidenceItem, Revisions, RowRequirements, derive_state
from omniqual.specs.matrix import LoadedMatrix, PlannedRow


@dataclass(frozen=True, slots=True)
class LocatedResult:
    """A result and the path (relative to the compiled output) of the run that holds it."""

    result: GateResult
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


def _revisions(provenance: Provenance) -> Revisions:
    return tuple(getattr(provenance, name) for name in REVISION_FIELDS)


def _target(pinned: Provenance, results: Sequence[LocatedResult]) -> Revisions:
    """Pinned revisions, completed from the newest conclusive result on the row: evidence from
    an older checkpoint or vLLM-Omni than the newest one seen is stale."""
    conclusive = [r.result for r in results if r.result.outcome.conclusive]
    newest = max(conclusive, key=lambda r: r.finished_at, default=None)
    seen = _revisions(newest.provenance) if newest else (None,) * len(REVISION_FIELDS)
    return tuple(
        pin if pin is not None else now for pin, now in zip(_revisions(pinned), seen, strict=True)
    )


def compile_matrix(
    matrix: LoadedMatrix,
    gate_versions: Mapping[str, int],
    results: Iterable[LocatedResult],
    *,
    evidence_dirs: Sequence[Path] = (),
    now: datetime | None = None,
) -> CompiledMatrix:
    by_row: dict[str, list[LocatedResult]] = defaultdict(list)
    runs: set[str] = set()
    for located in results:
        by_row[located.result.row].append(located)
        runs.add(located.result.run_id)
    rows = [
        _compile_row(row, by_row.get(str(row.key), []), matrix, gate_versions)
        for row in matrix.rows
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
    located: list[LocatedResult],
    matrix: LoadedMatrix,
    gate_versions: Mapping[str, int],
) -> CompiledRow:
    items = [
        EvidenceItem(
            result_id=r.result.result_id,
            run_id=r.result.run_id,
            gate_id=r.result.gate_id,
            gate_version=r.result.gate_version,
            outcome=r.result.outcome,
            finished_at=r.result.finished_at,
            has_artifacts=bool(r.result.artifacts),
            startup_only=r.result.startup_only,
            revisions=_revisions(r.result.provenance),
            reasons=r.result.reasons,
        )
        for r in located
    ]
    derivation = derive_state(
        requirements_of(row), items, gate_versions, _target(matrix.definition.target, located)
    )
    by_id = {r.result.result_id: r for r in located}
    evidence = tuple(
        EvidenceRef(
            run_id=by_id[rid].result.run_id,
            result_id=rid,
            gate_id=by_id[rid].result.gate_id,
            outcome=by_id[rid].result.outcome.value,
            artifacts=tuple(a.sha256 for a in by_id[rid].result.artifacts),
            link=by_id[rid].link,
        )
        for rid in derivation.supporting
    )
    latest: dict[str, GateResult] = {}
    for r in sorted((x.result for x in located), key=lambda g: g.finished_at):
        latest[r.gate_id] = r
    requirements = requirements_of(row)
    return CompiledRow(
        key=str(row.key),
        axes=row.key.as_dict(),
        state=derivation.state,
        reasons=derivation.reasons,
        required_gates=requirements.requires,
        limitation=requirements.limitation,
        evidence=evidence,
        gate_outcomes={gate: r.outcome.value for gate, r in sorted(latest.items())},
        declared=row.spec.declared,
        note=row.spec.note,
    )
