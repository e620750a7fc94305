"""Render compiled matrices and run evidence reports as Markdown, HTML or JSON.

Templates only loop over the view-models built in ``views``/``run_views``. HTML is autoescaped
and self-contained (inline CSS and SVG, data-URI pictures, no scripts, no external assets). JSON
is the record (matrix) or the view (run report) with sorted keys. The run report's Markdown fits
a GitHub PR comment (``comment_fit``); ``md-full`` is the same report uncut; ``step-summary`` is
the short form for ``$GITHUB_STEP_SUMMARY``. ``render_diff`` lives in ``diff``.
"""

import dataclasses
from pathlib import Path
from typing import Literal

from omniqual.domain.matrix import CompiledMatrix
from omniqual.report.comment_fit import COMMENT_LIMIT, STEP_SUMMARY_LIMIT, fit
from omniqual.report.csv_export import csv_files
from omniqual.report.diff import DiffFormat, render_diff
from omniqual.report.matrix_pages import matrix_report
from omniqual.report.parity_views import embedded_images
from omniqual.report.run_views import RunEvidence, RunReportView, run_report_view
from omniqual.report.templates import (
    DEFAULT_TEMPLATES_DIR,
    TemplatesNotFoundError,
    check_format,
    dump_json,
    markdown_escape,
    render_template,
)

__all__ = [
    "DEFAULT_TEMPLATES_DIR",
    "RUN_FORMATS",
    "DiffFormat",
    "ReportFormat",
    "RunFormat",
    "TemplatesNotFoundError",
    "markdown_escape",
    "render_diff",
    "render_matrix",
    "render_run_report",
    "run_report_tables",
]

ReportFormat = Literal["md", "html", "json"]
RunFormat = Literal["md", "md-full", "html", "json", "step-summary"]
RUN_FORMATS: tuple[str, ...] = ("md", "md-full", "html", "json", "step-summary")


def render_matrix(
    matrix: CompiledMatrix, fmt: ReportFormat, templates_dir: Path | None = None
) -> str:
    """The compiled matrix as a report; ``json`` is the matrix record itself."""
    check_format(fmt, ("md", "html", "json"))
    if fmt == "json":
        return dump_json(matrix.model_dump(mode="json"))
    return matrix_report(matrix, fmt, templates_dir)


def render_run_report(
    evidence: RunEvidence, fmt: RunFormat, templates_dir: Path | None = None
) -> str:
    """The PR evidence report; ``json`` is the report view."""
    check_format(fmt, RUN_FORMATS)
    view = run_report_view(evidence)
    if fmt == "json":
        return dump_json(dataclasses.asdict(view))
    if fmt == "html":
        # Only the self-contained HTML page carries picture payloads; Markdown links the files.
        images = embedded_images(view.sections, evidence.artifact_dirs)
        return render_template("run.html.j2", templates_dir, view=view, images=images)
    name = "run.step.md.j2" if fmt == "step-summary" else "run.md.j2"

    def markdown(v: RunReportView) -> str:
        return render_template(name, templates_dir, view=v, images={})

    if fmt == "md-full":
        return markdown(view)
    return fit(view, markdown, STEP_SUMMARY_LIMIT if fmt == "step-summary" else COMMENT_LIMIT)


def run_report_tables(evidence: RunEvidence) -> dict[str, str]:
    """Every table of the run report as CSV text, by file name."""
    return csv_files(run_report_view(evidence))
