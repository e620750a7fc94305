"""Golden files for every report format, rendered from the fixed records in report_fixtures.

A template or view change shows up here as a readable diff of the rendered output. After an
intended change, regenerate the files:

    OMNIQUAL_UPDATE_GOLDEN=1 .venv/bin/pytest tests/golden

That run rewrites every golden file that changed and fails, printing each diff; review the
diffs (also in ``git diff tests/golden``), commit them, and run again without the variable to
see the strict comparison pass (see golden_files).
"""

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from omniqual.domain.matrix import CompiledMatrix
from omniqual.report.diff import diff_matrices
from omniqual.report.render import render_diff, render_matrix, render_run_report
from omniqual.report.run_views import run_report_view
from tests.golden import report_fixtures as fx
from tests.golden.golden_files import assert_matches_golden

GOLDEN = Path(__file__).parent / "report"
_PLOT = re.compile(r"<svg\b.*?</svg>", re.DOTALL)


def _without_plot_bytes(text: str) -> str:
    """Inline plots are matplotlib's bytes, which change with its version: the golden keeps
    where each plot goes; tests/unit/report/test_sweep_report.py checks what is drawn."""
    return _PLOT.sub("<svg>[plot]</svg>", text)


CASES: dict[str, Callable[[], str]] = {
    "matrix.md": lambda: render_matrix(fx.matrix(), "md"),
    "matrix.html": lambda: render_matrix(fx.matrix(), "html"),
    "matrix.json": lambda: render_matrix(fx.matrix(), "json"),
    "run.md": lambda: render_run_report(fx.run_evidence(), "md"),
    "run.html": lambda: render_run_report(fx.run_evidence(), "html"),
    "run.json": lambda: render_run_report(fx.run_evidence(), "json"),
    "run.step-summary.md": lambda: render_run_report(fx.run_evidence(), "step-summary"),
    "run.big-comment.md": lambda: render_run_report(fx.big_run_evidence(), "md"),
    "diff.md": lambda: render_diff(diff_matrices(fx.matrix(), fx.later_matrix()), "md"),
    "diff.json": lambda: render_diff(diff_matrices(fx.matrix(), fx.later_matrix()), "json"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_render_matches_golden_file(name: str) -> None:
    assert_matches_golden(GOLDEN / name, _without_plot_bytes(CASES[name]()))


def test_rendering_is_deterministic() -> None:
    assert all(CASES[name]() == CASES[name]() for name in CASES)


def test_large_matrix_fits_a_pr_comment_and_says_what_was_folded() -> None:
    text = (GOLDEN / "run.big-comment.md").read_text(encoding="utf-8")
    full = render_run_report(fx.big_run_evidence(), "md-full")
    assert len(full) > 65_536  # the fixture is really too big for one comment
    assert len(text) <= 65_536
    assert "Trimmed to fit a PR comment" in text
    assert "the full report is report.html" in text
    results = len(fx.big_run_evidence().results)  # a contract result per row, and fail-fast ones
    assert len(fx.big_run_evidence().matrix.rows) == fx.BIG_ROWS < results
    assert re.search(rf"_\d+ of {results} rows shown; the full table is in report.html_", text)
    assert f"per-gate verdicts cut to 100 of {results}" in text
    # The findings come first and are cut late: the heading still counts every one.
    findings = len(render_run_report_view_findings())
    assert text.index("## States") < text.index("## Findings") < text.index("## 1. ")
    assert f"## Findings ({findings})" in text
    assert re.search(rf"findings cut to the first \d+ of {findings}", text)
    assert "<details>" in text


def render_run_report_view_findings() -> tuple[object, ...]:
    return run_report_view(fx.big_run_evidence()).findings


# An absolute path of two or more components outside a URL or closing tag; vLLM's routes
# (``/v1/...``) are the only ones a report names.
_ABSOLUTE_PATH = re.compile(r"(?<![\w.~/:<-])(?:file://)?/[\w.@+%-]+(?:/[\w.@+%-]*)+")


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_render_shows_a_path_of_the_machine_that_made_it(name: str) -> None:
    text = CASES[name]()
    assert [p for p in _ABSOLUTE_PATH.findall(text) if not p.startswith("/v1/")] == []
    assert "~/" not in text


def test_golden_matrix_json_round_trips() -> None:
    text = (GOLDEN / "matrix.json").read_text(encoding="utf-8")
    assert CompiledMatrix.model_validate_json(text) == fx.matrix()


def test_golden_html_fetches_nothing() -> None:
    """Self-contained: no scripts, stylesheets, frames or remote media; pictures are data URIs
    and links are relative paths or in-page anchors."""
    html = CASES["run.html"]()
    assert not re.search(r"<(script|link|iframe|object|embed)\b", html, re.IGNORECASE)
    assert not re.search(r"""\b(src|href)=["']?(https?:|//|javascript:)""", html, re.IGNORECASE)
    assert all(src.startswith("data:") for src in re.findall(r'\bsrc="([^"]*)"', html))
    assert "@import" not in html
    assert not re.search(r"url\((?!#)", html)  # only in-page references (SVG clip paths)
