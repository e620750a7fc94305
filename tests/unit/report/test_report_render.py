"""Rendering: escaping, exact state strings, no checkmarks, strict templates, JSON dumps."""

import json
import re
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import jinja2
import pytest

from omniqual.domain.matrix import CompiledMatrix, CompiledRow
from omniqual.domain.outcomes import CellState
from omniqual.report.render import (
    TemplatesNotFoundError,
    markdown_escape,
    render_matrix,
)

CHECKMARKS = re.compile("[\u2713\u2714\u2705\u2611\u2612\u2717\u2718\u274c\u2753\U0001f7e2]")
EVIL = "<script>alert('x')</script>"


class _Cells(HTMLParser):
    """Collects state spans and every tag name seen."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.states: list[str] = []
        self._in_state = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self._in_state = tag == "span" and "state" in (dict(attrs).get("class") or "").split()

    def handle_data(self, data: str) -> None:
        if self._in_state:
            self.states.append(data)
            self._in_state = False


def _evil_matrix(
    make_row: Callable[..., CompiledRow], make_matrix: Callable[..., CompiledMatrix]
) -> CompiledMatrix:
    return make_matrix(
        make_row(
            CellState.NOT_TESTED,
            axes={"quantization": f"q|{EVIL}"},
            reasons=(f"a | b\nc {EVIL}",),
            note=EVIL,
        ),
        make_row(CellState.VALIDATED, axes={"quantization": "bf16"}),
    )


def test_html_escapes_script_in_reasons_values_and_notes(
    make_row: Callable[..., CompiledRow], make_matrix: Callable[..., CompiledMatrix]
) -> None:
    html = render_matrix(_evil_matrix(make_row, make_matrix), "html")
    assert "<script" not in html.lower()
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in html
    parser = _Cells()
    parser.feed(html)
    assert "script" not in parser.tags


def test_html_is_self_contained(every_state_matrix: CompiledMatrix) -> None:
    html = render_matrix(every_state_matrix, "html")
    assert "<style>" in html
    assert not re.search(r"<(script|link|img|iframe)\b", html)
    assert "src=" not in html and "@import" not in html and "url(" not in html


def test_markdown_escapes_pipes_newlines_and_tags(
    make_row: Callable[..., CompiledRow], make_matrix: Callable[..., CompiledMatrix]
) -> None:
    md = render_matrix(_evil_matrix(make_row, make_matrix), "md")
    assert "<script" not in md
    assert "a \\| b<br>c &lt;script>" in md
    lines = md.splitlines()
    header = next(line for line in lines if line.startswith("| # |"))
    rows = [line for line in lines if line.startswith(("| 1 |", "| 2 |"))]

    def cells(line: str) -> int:
        return len(re.findall(r"(?<!\\)\|", line))

    assert len(rows) == 2
    assert {cells(line) for line in rows} == {cells(header)}


def test_markdown_escape_keeps_one_line() -> None:
    assert markdown_escape("a|b\r\nc\rd<e>") == "a\\|b<br>c<br>d&lt;e>"


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_every_state_is_spelled_exactly(every_state_matrix: CompiledMatrix, fmt: str) -> None:
    text = render_matrix(every_state_matrix, fmt)  # type: ignore[arg-type]
    if fmt == "md":
        cells = re.findall(r"\| `([a-z ]+)` \| why|\| `(validated)` \| none", text)
        states = [a or b for a, b in cells]
    else:
        parser = _Cells()
        parser.feed(text)
        states = parser.states[9:]  # after the four states and the coverage map key (five)
    assert states == ["validated", "limited", "unsupported", "not tested"]


@pytest.mark.parametrize("fmt", ["md", "html", "json"])
def test_not_tested_is_never_checkmarked(every_state_matrix: CompiledMatrix, fmt: str) -> None:
    text = render_matrix(every_state_matrix, fmt)  # type: ignore[arg-type]
    assert not CHECKMARKS.search(text)
    for line in text.splitlines():
        if "not tested" in line and fmt == "md" and line.startswith("| 4 "):
            assert "`not tested`" in line
            assert "validated" not in line and " supported" not in line


def test_counts_are_rendered(
    make_row: Callable[..., CompiledRow], make_matrix: Callable[..., CompiledMatrix]
) -> None:
    matrix = make_matrix(
        *(make_row(CellState.UNSUPPORTED, axes={"quantization": f"u{i}"}) for i in range(2)),
        *(make_row(CellState.NOT_TESTED, axes={"quantization": f"n{i}"}) for i in range(5)),
    )
    md = render_matrix(matrix, "md")
    assert re.search(r"^\| `unsupported` \| 2 \|", md, re.M)
    assert re.search(r"^\| `not tested` \| 5 \|", md, re.M)
    assert re.search(r"^\| `validated` \| 0 \|", md, re.M)
    assert re.search(r"^\| total \| 7 \|", md, re.M)
    html = render_matrix(matrix, "html")
    assert 'state-not-tested">not tested</span></td><td class="num">5</td>' in html


def test_json_is_the_matrix_with_sorted_keys(every_state_matrix: CompiledMatrix) -> None:
    text = render_matrix(every_state_matrix, "json")
    assert CompiledMatrix.model_validate_json(text) == every_state_matrix
    data = json.loads(text)
    assert list(data) == sorted(data)
    assert [row["state"] for row in data["rows"]] == [s.value for s in CellState]


def test_strict_undefined_fails_loudly(tmp_path: Path, every_state_matrix: CompiledMatrix) -> None:
    (tmp_path / "matrix.md.j2").write_text("{{ view.no_such_field }}", encoding="utf-8")
    with pytest.raises(jinja2.UndefinedError):
        render_matrix(every_state_matrix, "md", templates_dir=tmp_path)


def test_custom_templates_dir_is_used(tmp_path: Path, every_state_matrix: CompiledMatrix) -> None:
    (tmp_path / "matrix.md.j2").write_text("rows={{ view.total }}", encoding="utf-8")
    assert render_matrix(every_state_matrix, "md", templates_dir=tmp_path) == "rows=4\n"


def test_missing_templates_are_a_clear_error(
    tmp_path: Path, every_state_matrix: CompiledMatrix
) -> None:
    with pytest.raises(TemplatesNotFoundError, match="not found"):
        render_matrix(every_state_matrix, "md", templates_dir=tmp_path / "absent")
    with pytest.raises(TemplatesNotFoundError, match=r"matrix\.html\.j2"):
        render_matrix(every_state_matrix, "html", templates_dir=tmp_path)


def test_unknown_format_is_rejected(every_state_matrix: CompiledMatrix) -> None:
    with pytest.raises(ValueError, match="unknown report format"):
        render_matrix(every_state_matrix, "pdf")  # type: ignore[arg-type]


def test_javascript_links_are_not_rendered_as_links(
    make_row: Callable[..., CompiledRow], make_matrix: Callable[..., CompiledMatrix]
) -> None:
    row = make_row(CellState.VALIDATED)
    evil = row.evidence[0].model_copy(update={"link": "javascript:alert(1)"})
    html = render_matrix(make_matrix(row.model_copy(update={"evidence": (evil,)})), "html")
    assert "javascript:" not in html
    assert "g1: passed" in html
