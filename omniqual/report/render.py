"""Render compiled matrices and run evidence reports as Markdown, HTML or JSON.

Templates only loop over the view-models built in ``views``/``run_views``. HTML is autoescaped
and self-contained (inline CSS, no scripts, no external assets). JSON is the record (matrix) or
the view (run report) with sorted keys. ``render_diff`` lives in ``diff`` and is re-exported here.
"""

import dataclasses
from pathlib import Path
from typing import Literal

from omniqual.domain.matrix import CompiledMatrix
from omniqual.report.diff import DiffFormat, render_diff
from omniqual.report.parity_views import embedded_images
from omniqual.report.run_views import RunEvidence, run_report_view
from omniqual.report.templates import (
    DEFAULT_TEMPLATES_DIR,
    TemplatesNotFoundError,
    check_format,
    dump_json,
    markdown_escape,
    render_template,
)
from omniqual.report.views import matrix_view

__all__ = [
    "DEFAULT_TEMPLATES_DIR",
    "DiffFormat",
    "ReportFormat",
    "TemplatesNotFoundError",
    "markdown_escape",
    "render_diff",
    "render_matrix",
    "render_run_report",
]

ReportFormat = Literal["md", "html", "json"]


def render_matrix(
    matrix: CompiledMatrix, fmt: ReportFormat, templates_dir: Path | None = None
) -> str:
    """The compiled matrix as a report; ``json`` is the matrix record itself."""
    check_format(fmt, ("md", "html", "json"))
    if fmt == "json":
        return dump_json(matrix.model_dump(mode="json"))
    return render_template(f"matrix.{fmt}.j2", templates_dir, view=matrix_view(matrix))


def render_run_report(
    evidence: RunEvidence, fmt: ReportFormat, templates_dir: Path | None = None
) -> str:
    """The ten-section run evidence report; ``json`` is the report view."""
    check_format(fmt, ("md", "html", "json"))
    view = run_report_view(evidence)
    if fmt == "json":
        return dump_json(dataclasses.asdict(view))
    # Only the self-contained HTML page carries picture payloads; Markdown links the files.
    images = embedded_images(view.sections, evidence.artifact_dirs) if fmt == "html" else {}
    return render_template(f"run.{fmt}.j2", templates_dir, view=view, images=images)
