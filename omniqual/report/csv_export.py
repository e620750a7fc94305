"""Every table of the run report as a CSV file, for spreadsheets and notebooks.

The csv module writes them (RFC 4180, UTF-8, ``\\n`` line ends): a table of strings needs no
data-frame library. One file per table, named by its section and title
(``06-measurements.csv``; the per-gate verdicts and their reasons in full are ``00-…``); a
table whose rows link their records gets a trailing ``evidence`` column with the link. Cells are
the report's own redacted strings, so a CSV never holds more than the report shows.
"""

import csv
import io
import re
from collections.abc import Iterator
from pathlib import Path

from omniqual.report.blocks import Table
from omniqual.report.run_views import RunReportView

_SLUG = re.compile(r"[^a-z0-9]+")


def _slug(title: str) -> str:
    return _SLUG.sub("-", title.lower()).strip("-")[:80] or "table"


def _tables(view: RunReportView) -> Iterator[tuple[int, Table]]:
    yield 0, view.verdicts
    yield 0, view.verdict_reasons
    for section in view.sections:
        for block in section.blocks:
            if isinstance(block, Table):
                yield section.number, block
    yield from view.data_tables


def table_csv(table: Table) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    linked = any(table.links)
    writer.writerow((*table.headers, "evidence") if linked else table.headers)
    for i, row in enumerate(table.rows):
        writer.writerow((*row, table.links[i]) if linked else row)
    return out.getvalue()


def csv_files(view: RunReportView) -> dict[str, str]:
    """File name → CSV text for every table that has rows, in report order."""
    files: dict[str, str] = {}
    for number, table in _tables(view):
        if not table.rows:
            continue
        stem = f"{number:02d}-{_slug(table.title)}"
        name, n = f"{stem}.csv", 1
        while name in files:
            n += 1
            name = f"{stem}-{n}.csv"
        files[name] = table_csv(table)
    return files


def write_csv(view: RunReportView, directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in csv_files(view).items():
        path = directory / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
