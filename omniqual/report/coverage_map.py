"""The matrix drawn as a coverage map, the way community coverage maps show evidence.

One line per serving group (the varying ``model``/``task``/``api_mode`` values) and one column
per deployment variant: the axes a row changes from its line's most common values (the
line's baseline; an axis that follows the serving group, like the output transport, so
never opens a column). A cell is one row of the matrix, coloured by its state; a combination
the matrix has no row for is grey, ``not tested``, like a row nobody measured. HTML draws it
as a grid of coloured cells linked to the rows; Markdown as a compact table of state marks.
"""

from collections import Counter
from dataclasses import dataclass

from omniqual.domain.matrix import CompiledMatrix, CompiledRow
from omniqual.domain.outcomes import CellState
from omniqual.report.views import GROUP_AXES, MatrixView, split_axes, state_class

MARKS: dict[str, str] = {
    CellState.VALIDATED.value: "🟩",
    CellState.LIMITED.value: "🟨",
    CellState.UNSUPPORTED.value: "🟥",
    CellState.NOT_TESTED.value: "⬜",
}
"""Markdown has no colour: a coloured mark per state, always with the state's name in the key."""
BASELINE = "baseline"
NO_ROW = "no row in the matrix"


@dataclass(frozen=True, slots=True)
class CoverageCell:
    state: str
    state_class: str
    mark: str
    row: int | None
    """The row's number in the rendered matrix; None where the matrix has no such row."""
    anchor: str
    title: str


@dataclass(frozen=True, slots=True)
class CoverageLine:
    label: str
    baseline: str
    """The line's most common deployment values (what its ``baseline`` column means)."""
    cells: tuple[CoverageCell, ...]


@dataclass(frozen=True, slots=True)
class CoverageMap:
    group_axes: tuple[str, ...]
    columns: tuple[str, ...]
    """Each column is a variant: the axes it changes from the baseline, or ``baseline``."""
    lines: tuple[CoverageLine, ...]
    key: tuple[tuple[str, str, str], ...]
    """(mark, state, css class) for the legend."""


def _baseline(rows: list[CompiledRow], axes: tuple[str, ...]) -> dict[str, str]:
    """Per axis, the most common value (first seen wins a tie): the variant columns' origin."""
    chosen: dict[str, str] = {}
    for axis in axes:
        values = [row.axes.get(axis, "") for row in rows]
        counts = Counter(values)
        top = max(counts.values())
        chosen[axis] = next(v for v in values if counts[v] == top)
    return chosen


def coverage_map(matrix: CompiledMatrix, view: MatrixView) -> CoverageMap:
    _, varying = split_axes(matrix)
    group_axes = tuple(a for a in GROUP_AXES if a in varying)
    variant_axes = tuple(a for a in varying if a not in group_axes)
    numbers = {row.key: row.number for group in view.groups for row in group.rows}
    by_line: dict[str, list[CompiledRow]] = {}
    for row in matrix.rows:
        line = " · ".join(row.axes.get(a, "") for a in group_axes) or "all rows"
        by_line.setdefault(line, []).append(row)
    columns: list[str] = []
    placed: dict[tuple[str, str], tuple[str, int]] = {}
    bases: dict[str, dict[str, str]] = {}
    for line, rows in by_line.items():
        base = bases[line] = _baseline(rows, variant_axes)
        for row in rows:
            changed = [f"{a}={row.axes.get(a, '')}" for a in variant_axes
                       if row.axes.get(a, "") != base[a]]  # fmt: skip
            column = "; ".join(changed) or BASELINE
            if column not in columns:
                columns.append(column)
            placed.setdefault((line, column), (row.state.value, numbers.get(row.key, 0)))
    if BASELINE in columns:  # the baseline column first, the variants in matrix order
        columns.remove(BASELINE)
        columns.insert(0, BASELINE)
    built = []
    for line in by_line:
        cells = []
        for column in columns:
            state, number = placed.get((line, column), (CellState.NOT_TESTED.value, 0))
            where = f"{line} / {column}"
            cells.append(CoverageCell(
                state=state, state_class=state_class(state), mark=MARKS[state],
                row=number or None, anchor=f"row-{number}" if number else "",
                title=f"#{number} {where}: {state}" if number else f"{where}: {NO_ROW}",
            ))  # fmt: skip
        shown = "; ".join(f"{a}={v}" for a, v in bases[line].items())
        built.append(CoverageLine(line, shown or BASELINE, tuple(cells)))
    key = tuple((MARKS[s.value], s.value, state_class(s)) for s in CellState)
    return CoverageMap(group_axes, tuple(columns), tuple(built), key)
