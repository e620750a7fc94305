"""A compiled matrix as HTML pages a browser can open: one page when it is small, else a summary
page (states, counts, one line per page) and the rows split by model group into pages of at most
``page_rows`` rows each, under a directory named after the summary (``matrix.html`` beside
``matrix/001-<model>.html``...), each linked from the summary and back.

A page of a hundred thousand rows is a hundred megabytes no browser renders; the summary stays
small whatever the row count (its size grows with the number of pages only).
"""

import re
from dataclasses import dataclass
from pathlib import Path

from omniqual.domain.matrix import CompiledMatrix, CompiledRow
from omniqual.domain.outcomes import CellState
from omniqual.report.coverage_map import coverage_map
from omniqual.report.findings import matrix_findings
from omniqual.report.redact import without_local_paths
from omniqual.report.templates import DEFAULT_TEMPLATES_DIR, _environment, render_template
from omniqual.report.views import (
    GROUP_AXES,
    STATE_MEANINGS,
    LegendEntry,
    StateCount,
    matrix_view,
    split_axes,
    state_class,
)

PAGE_ROWS = 2000
"""Rows per page; a matrix with no more rows than this is a single page (``render_matrix``)."""

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True, slots=True)
class PageEntry:
    """One line of the summary: a page of rows and what they hold."""

    title: str
    href: str
    """Relative to the summary page."""
    first: int
    last: int
    """Row numbers (counting from 1 across pages) of the page's first and last row."""
    counts: tuple[StateCount, ...]


@dataclass(frozen=True, slots=True)
class MatrixSummary:
    name: str
    title: str
    compiled_at: str
    schema_version: int
    runs: tuple[str, ...]
    evidence_dirs: tuple[str, ...]
    common: tuple[tuple[str, str], ...]
    group_axis: str
    legend: tuple[LegendEntry, ...]
    counts: tuple[StateCount, ...]
    total: int
    pages: tuple[PageEntry, ...]


_ABSOLUTE = re.compile(r"^(/|#|[A-Za-z][A-Za-z0-9+.-]*:)")


def matrix_report(matrix: CompiledMatrix, fmt: str, templates_dir: Path | None = None) -> str:
    """The whole matrix on one page (``md`` or ``html``): its states, coverage map and findings
    first, then every row."""
    view = matrix_view(matrix)
    return render_template(f"matrix.{fmt}.j2", templates_dir, view=view,
                           coverage=coverage_map(matrix, view),
                           findings=matrix_findings(matrix, view))  # fmt: skip


def _one_down(row: CompiledRow) -> CompiledRow:
    """``row`` with its relative evidence links made relative to a page one directory down."""
    if not any(not _ABSOLUTE.match(ref.link) for ref in row.evidence):
        return row
    evidence = tuple(
        ref if _ABSOLUTE.match(ref.link) else ref.model_copy(update={"link": f"../{ref.link}"})
        for ref in row.evidence
    )
    return row.model_copy(update={"evidence": evidence})


def _counts(rows: list[CompiledRow]) -> tuple[StateCount, ...]:
    tally = dict.fromkeys(CellState, 0)
    for row in rows:
        tally[row.state] += 1
    return tuple(StateCount(s.value, state_class(s), tally[s]) for s in CellState)


def _pages(
    matrix: CompiledMatrix, axis: str, page_rows: int
) -> list[tuple[str, list[CompiledRow]]]:
    """(title, rows) per page: groups in the matrix's order, each cut into page_rows pieces."""
    groups: dict[str, list[CompiledRow]] = {}
    for row in matrix.rows:
        groups.setdefault(row.axes.get(axis, "") if axis else "", []).append(row)
    pages = []
    for value, rows in groups.items():
        parts = range(0, len(rows), page_rows)
        for n, start in enumerate(parts, 1):
            title = f"{axis}={value}" if axis else "rows"
            pages.append((title + (f" (part {n} of {len(parts)})" if len(parts) > 1 else ""),
                          rows[start : start + page_rows]))  # fmt: skip
    return pages


def render_matrix_pages(
    matrix: CompiledMatrix,
    stem: str = "matrix",
    *,
    page_rows: int = PAGE_ROWS,
    templates_dir: Path | None = None,
) -> dict[Path, str]:
    """Relative path → HTML: ``<stem>.html`` and, for a matrix of more than ``page_rows`` rows
    (0: never split), one ``<stem>/<nnn>-<group>.html`` per page."""
    summary_name = Path(f"{stem}.html")
    if page_rows <= 0 or len(matrix.rows) <= page_rows:
        return {summary_name: matrix_report(matrix, "html", templates_dir)}
    common, varying = split_axes(matrix)
    axis = next((a for a in GROUP_AXES if a in varying), "")
    pages = _pages(matrix, axis, page_rows)
    paths = [Path(stem) / f"{n:03d}-{_UNSAFE.sub('_', title)[:60]}.html"
             for n, (title, _) in enumerate(pages, 1)]  # fmt: skip
    entries: list[PageEntry] = []
    first = 1
    for path, (title, rows) in zip(paths, pages, strict=True):
        entries.append(PageEntry(title, path.as_posix(), first, first + len(rows) - 1,
                                 _counts(rows)))  # fmt: skip
        first += len(rows)
    summary = MatrixSummary(
        name=matrix.name, title=matrix.title or matrix.name,
        compiled_at=matrix.compiled_at.isoformat(), schema_version=matrix.schema_version,
        runs=matrix.runs, evidence_dirs=matrix.evidence_dirs, common=common, group_axis=axis,
        legend=tuple(LegendEntry(s.value, state_class(s), m) for s, m in STATE_MEANINGS),
        counts=_counts(list(matrix.rows)), total=len(matrix.rows), pages=tuple(entries),
    )  # fmt: skip
    out = {summary_name: render_template("matrix_summary.html.j2", templates_dir, view=summary)}
    # One compiled template for every page (render_template would rebuild it per page).
    group = _environment(templates_dir or DEFAULT_TEMPLATES_DIR).get_template(
        "matrix_group.html.j2"
    )
    for n, (path, entry, (_, rows)) in enumerate(zip(paths, entries, pages, strict=True)):
        nav = {"summary": f"../{summary_name.name}", "number": n + 1, "of": len(pages),
               "previous": paths[n - 1].name if n else "",
               "next": paths[n + 1].name if n + 1 < len(paths) else ""}  # fmt: skip
        view = matrix_view(matrix.model_copy(update={"rows": tuple(map(_one_down, rows))}))
        page = group.render(view=view, page=entry, nav=nav).rstrip("\n") + "\n"
        out[path] = without_local_paths(page)
    return out
