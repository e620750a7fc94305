"""Report layer: renders compiled matrices, run evidence and matrix diffs (md, html, json),
the PR evidence report (comment-sized Markdown, step summary, self-contained HTML) and its
tables as CSV.

Depends only on ``omniqual.domain``, jinja2 and matplotlib; templates live in the top-level
``reports/``.
"""

from omniqual.report.comment_fit import COMMENT_LIMIT, STEP_SUMMARY_LIMIT
from omniqual.report.csv_export import csv_files, write_csv
from omniqual.report.diff import (
    DiffFormat,
    MatrixDiff,
    RowChange,
    RowSide,
    diff_matrices,
    render_diff,
)
from omniqual.report.links import EvidenceLinks
from omniqual.report.render import (
    RUN_FORMATS,
    ReportFormat,
    RunFormat,
    render_matrix,
    render_run_report,
    run_report_tables,
)
from omniqual.report.run_views import SECTION_BY_KIND, RunEvidence, RunReportView, run_report_view
from omniqual.report.templates import DEFAULT_TEMPLATES_DIR, TemplatesNotFoundError
from omniqual.report.views import MatrixView, matrix_view

__all__ = [
    "COMMENT_LIMIT",
    "DEFAULT_TEMPLATES_DIR",
    "RUN_FORMATS",
    "SECTION_BY_KIND",
    "STEP_SUMMARY_LIMIT",
    "DiffFormat",
    "EvidenceLinks",
    "MatrixDiff",
    "MatrixView",
    "ReportFormat",
    "RowChange",
    "RowSide",
    "RunEvidence",
    "RunFormat",
    "RunReportView",
    "TemplatesNotFoundError",
    "csv_files",
    "diff_matrices",
    "matrix_view",
    "render_diff",
    "render_matrix",
    "render_run_report",
    "run_report_tables",
    "run_report_view",
    "write_csv",
]
