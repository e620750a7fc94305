"""Compare two compiled matrices row by row: what was added, removed, or changed state, and why.

Rows are matched by their canonical key. A state change carries both sides' reasons and the
evidence (run/result ids) each side rests on, so a reviewer sees why a row moved. The diff
renders as Markdown (``reports/diff.md.j2``) or as JSON (the diff itself, sorted keys).
"""

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from omniqual.domain.matrix import CompiledMatrix, CompiledRow
from omniqual.report.redact import without_local_paths
from omniqual.report.templates import check_format, dump_json, render_template
from omniqual.report.views import row_reasons

DiffFormat = Literal["md", "json"]

Change = Literal["added", "removed", "state changed"]


@dataclass(frozen=True, slots=True)
class RowSide:
    """One matrix's account of a row."""

    state: str
    reasons: tuple[str, ...]
    evidence: tuple[str, ...]
    """``run_id/result_id (gate: outcome)`` for each evidence reference."""


@dataclass(frozen=True, slots=True)
class RowChange:
    key: str
    change: Change
    old: RowSide | None
    new: RowSide | None


@dataclass(frozen=True, slots=True)
class MatrixDiff:
    old_name: str
    new_name: str
    old_compiled_at: str
    new_compiled_at: str
    axes_added: tuple[str, ...]
    axes_removed: tuple[str, ...]
    added: tuple[RowChange, ...]
    removed: tuple[RowChange, ...]
    changed: tuple[RowChange, ...]
    unchanged: int
    """Rows present in both with the same state."""

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)


def _side(row: CompiledRow) -> RowSide:
    return RowSide(
        state=row.state.value,
        reasons=row_reasons(row),
        evidence=tuple(
            f"{ref.run_id}/{ref.result_id} ({ref.gate_id}: {ref.outcome})" for ref in row.evidence
        ),
    )


def diff_matrices(a: CompiledMatrix, b: CompiledMatrix) -> MatrixDiff:
    """What changed going from ``a`` (old) to ``b`` (new); every list is sorted by row key."""
    old = {row.key: row for row in a.rows}
    new = {row.key: row for row in b.rows}
    added = tuple(
        RowChange(key, "added", None, _side(new[key])) for key in sorted(new.keys() - old.keys())
    )
    removed = tuple(
        RowChange(key, "removed", _side(old[key]), None) for key in sorted(old.keys() - new.keys())
    )
    changed: list[RowChange] = []
    unchanged = 0
    for key in sorted(old.keys() & new.keys()):
        if old[key].state == new[key].state:
            unchanged += 1
        else:
            changed.append(RowChange(key, "state changed", _side(old[key]), _side(new[key])))
    return MatrixDiff(
        old_name=a.name,
        new_name=b.name,
        old_compiled_at=a.compiled_at.isoformat(),
        new_compiled_at=b.compiled_at.isoformat(),
        axes_added=tuple(x for x in b.axes if x not in a.axes),
        axes_removed=tuple(x for x in a.axes if x not in b.axes),
        added=added,
        removed=removed,
        changed=tuple(changed),
        unchanged=unchanged,
    )


def render_diff(diff: MatrixDiff, fmt: DiffFormat, templates_dir: Path | None = None) -> str:
    """A matrix diff as Markdown, or as JSON (the diff itself)."""
    check_format(fmt, ("md", "json"))
    if fmt == "json":
        return without_local_paths(dump_json(dataclasses.asdict(diff)))
    return render_template("diff.md.j2", templates_dir, diff=diff)
