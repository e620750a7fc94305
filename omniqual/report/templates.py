"""The jinja environment over the top-level ``reports/`` templates, and the JSON dump format.

jinja runs with ``StrictUndefined`` so a missing field fails loudly instead of leaving a blank
cell; ``.html.j2`` templates are autoescaped; Markdown values pass through the ``md`` filter.
Every rendered text passes through ``redact.without_local_paths`` last: whatever a view let
through, no local path reaches a report. JSON is dumped with sorted keys so committed outputs
diff cleanly.
"""

import json
import logging
import re
from pathlib import Path

import jinja2

from omniqual.report.redact import without_local_paths

logger = logging.getLogger(__name__)

DEFAULT_TEMPLATES_DIR = Path(__file__).resolve().parents[2] / "reports"


class TemplatesNotFoundError(FileNotFoundError):
    """The report templates directory is missing or lacks a template."""


def markdown_escape(value: object) -> str:
    """Text safe inside a Markdown table cell or list item: one line, no raw HTML, no pipes."""
    text = str(value)
    # Escaping "<" alone stops raw HTML tags; ">" and "&" stay readable in plain text.
    text = text.replace("<", "&lt;")
    text = text.replace("|", "\\|")
    return "<br>".join(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))


_NUMBER = re.compile(r"^[-+~#]?\d")


def is_figure(value: object) -> bool:
    """A table cell that is a number (a measurement, count, status, duration or row number):
    the HTML report links it to its evidence. Text that merely contains digits is not."""
    return bool(_NUMBER.match(str(value).strip()))


def check_format(fmt: str, allowed: tuple[str, ...]) -> None:
    if fmt not in allowed:
        raise ValueError(f"unknown report format {fmt!r}; expected one of {', '.join(allowed)}")


def _environment(directory: Path) -> jinja2.Environment:
    if not directory.is_dir():
        raise TemplatesNotFoundError(
            f"report templates directory not found: {directory} (expected matrix.md.j2 and "
            "friends; pass templates_dir= or run from a checkout that has reports/)"
        )
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(directory),
        undefined=jinja2.StrictUndefined,
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "html.j2")),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["md"] = markdown_escape
    env.tests["figure"] = is_figure
    return env


def render_template(name: str, templates_dir: Path | None, **context: object) -> str:
    """Render ``name`` from ``templates_dir`` (default: the repository's ``reports/``)."""
    directory = templates_dir if templates_dir is not None else DEFAULT_TEMPLATES_DIR
    env = _environment(directory)
    try:
        template = env.get_template(name)
    except jinja2.TemplateNotFound as exc:
        raise TemplatesNotFoundError(
            f"report template {exc.name!r} not found in {directory}"
        ) from exc
    logger.debug("rendering %s from %s", name, directory)
    text = template.render(**context)
    if name.endswith(".md.j2"):
        # Macros leave runs of blank lines; Markdown treats them as one, so keep diffs quiet.
        text = re.sub(r"\n{3,}", "\n\n", text)
    return without_local_paths(text.rstrip("\n") + "\n")


def dump_json(data: object) -> str:
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
