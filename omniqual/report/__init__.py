"""Report layer: renders compiled matrices, run evidence and matrix diffs (md, html, json).

Depends only on ``omniqual.domain`` and jinja2; templates live in the top-level ``reports/``.
"""

from omniqual.report.diff import (
    DiffFormat,
    MatrixDiff,
    RowChange,
    RowSide,
    diff_matrices,
    render_diff,
)
from omniqual.report.render import ReportFormat, render_matrix, render_run_report
from omniqual.report.run_views import SECTION_BY_KIND, RunEvidence, RunReportView, run_report_view
from omniqual.report.templates import DEFAULT_TEMPLATES_DIR, TemplatesNotFoundError
from omniqual.report.views import MatrixView, matrix_view

__all__ = [
    "DEFAULT_TEMPLATES_DIR",
    "SECTION_BY_KIND",
    "DiffFormat",
    "MatrixDiff",
    "MatrixView",
    "ReportFormat",
    "RowChange",
    "RowSide",
    "RunEvidence",
    "RunReportView",
    "TemplatesNotFoundError",
    "diff_matrices",
    "matrix_view",
    "render_diff",
    "render_matrix",
    "render_run_report",
    "run_report_view",
]
