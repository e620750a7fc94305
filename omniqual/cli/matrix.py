"""``omniqual matrix validate|compile|render|diff|audit-claims``."""

from pathlib import Path

import typer

from omniqual.cli.exits import Exit, err_console, fail, user_errors
from omniqual.domain.matrix import CompiledMatrix
from omniqual.engine.matrix_service import (
    compile_from_dirs,
    declared_state_problems,
    load_project_matrix,
    write_json,
)
from omniqual.engine.run.plan import serve_config_notes
from omniqual.report.matrix_pages import PAGE_ROWS, render_matrix_pages
from omniqual.report.support_document import render_support_tables
from omniqual.specs.feature_tables import FEATURES_FILE, load_feature_tables
from omniqual.specs.project import find_project
from omniqual.specs.source import SpecError, SpecProblem

matrix_app = typer.Typer(no_args_is_help=True, help="Matrix definitions and compiled matrices.")


def write_matrix_pages(
    compiled: CompiledMatrix, summary: Path, page_rows: int = PAGE_ROWS
) -> list[Path]:
    """Write the matrix as HTML at ``summary`` (plus its group pages beside it, when large)."""
    written = []
    pages = render_matrix_pages(compiled, summary.stem, page_rows=page_rows)
    for relative, html in pages.items():
        path = summary.parent / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(html, encoding="utf-8")
        written.append(path)
    # Pages of an earlier, larger render would linger unlinked beside the new ones.
    directory = summary.parent / summary.stem
    if directory.is_dir():
        for old in directory.glob("[0-9][0-9][0-9]-*.html"):
            if old not in written:
                old.unlink()
    return written


EVIDENCE = typer.Option([], "--evidence", "-e", help="Run directory, or a directory of runs.")
FEATURES = typer.Option(
    None, "--features", help=f"Feature-table mapping (default: matrices/{FEATURES_FILE})."
)
FEATURE_TABLES = "vllm-omni-features"


def default_features(matrix: Path) -> Path:
    """The mapping beside a matrix definition, else in the project's ``matrices/``."""
    beside = matrix.parent / FEATURES_FILE
    return beside if beside.is_file() else find_project().matrices / FEATURES_FILE


@matrix_app.command("validate")
@user_errors
def validate(
    file: Path = typer.Argument(..., help="A matrix definition (matrices/<name>.yaml)."),
    evidence: list[Path] = EVIDENCE,
) -> None:
    """Check a matrix definition; with --evidence also check declared states against it.
    Values still marked TODO (in it, its models' contracts, its rows' recipes) come first."""
    from omniqual.engine.model_init.todos import draft_todos

    todos = draft_todos(file)
    if todos:
        raise SpecError(todos)
    loaded = load_project_matrix(file)
    problems = declared_state_problems(loaded, evidence)
    for problem in problems:
        err_console.print(str(problem), markup=False)
    if problems:
        raise typer.Exit(int(Exit.USAGE))
    typer.echo(f"{file}: ok ({len(loaded.matrix.rows)} rows, {len(loaded.gates)} gates)")
    for note in serve_config_notes(loaded):
        typer.echo(f"note: {note}")


@matrix_app.command("compile")
@user_errors
def compile_(
    matrix: Path = typer.Argument(..., help="A matrix definition."),
    evidence: list[Path] = EVIDENCE,
    output: Path = typer.Option(None, "-o", "--output", help="Default: <name>.compiled.json"),
) -> None:
    """Derive every row's state from the evidence; write the compiled matrix (sorted JSON)."""
    compiled = compile_from_dirs(load_project_matrix(matrix), evidence, output)
    target = output or Path(f"{compiled.name}.compiled.json")
    write_json(compiled, target)
    counts = ", ".join(f"{n} {state.value}" for state, n in compiled.counts().items())
    typer.echo(f"{target}: {len(compiled.rows)} rows ({counts})")


@matrix_app.command("render")
@user_errors
def render(
    matrix: Path = typer.Argument(..., help="A matrix definition or a compiled matrix JSON."),
    fmt: str = typer.Option("md", "--format", "-f", help="md, html, json or vllm-omni-features."),
    evidence: list[Path] = EVIDENCE,
    output: Path = typer.Option(None, "-o", "--output", help="Default: standard output."),
    hardware: str = typer.Option(
        None, "--hardware", help="vllm-omni-features: only this hardware (default: each one)."
    ),
    features: Path = FEATURES,
    page_rows: int = typer.Option(
        PAGE_ROWS,
        "--page-rows",
        help="html: a larger matrix becomes a summary page (-o) and "
        "pages of at most this many rows per model group in <output stem>/; 0: one page.",
    ),
) -> None:
    """Render the matrix with the exact four state strings, reasons and evidence links;
    ``vllm-omni-features``: as vLLM-Omni's diffusion feature tables, one set per hardware."""
    from omniqual.engine.matrix_service import load_compiled_or_compile
    from omniqual.report.render import render_matrix

    if fmt not in ("md", "html", "json", FEATURE_TABLES):
        raise ValueError(f"--format must be md, html, json or {FEATURE_TABLES}, not {fmt!r}")
    compiled = load_compiled_or_compile(matrix, evidence, output)
    if fmt == FEATURE_TABLES:
        mapping = load_feature_tables(features or default_features(matrix))
        _write(render_support_tables(compiled, mapping, hardware), output)
        return
    if fmt == "html" and 0 < page_rows < len(compiled.rows):
        if output is None:
            raise ValueError(f"{len(compiled.rows)} rows render as several pages (more than "
                             "--page-rows): give -o for the summary page")  # fmt: skip
        for path in write_matrix_pages(compiled, output, page_rows):
            typer.echo(f"wrote {path}")
        return
    _write(render_matrix(compiled, fmt), output)  # type: ignore[arg-type]


def _write(text: str, output: Path | None) -> None:
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {output}")


@matrix_app.command("diff")
@user_errors
def diff(
    a: Path = typer.Argument(..., help="Compiled matrix JSON (before)."),
    b: Path = typer.Argument(..., help="Compiled matrix JSON (after)."),
    fmt: str = typer.Option("md", "--format", "-f", help="md or json."),
) -> None:
    """Which rows changed state, and why."""
    from omniqual.engine.matrix_service import read_compiled
    from omniqual.report.diff import diff_matrices, render_diff

    changes = diff_matrices(read_compiled(a), read_compiled(b))
    typer.echo(render_diff(changes, fmt), nl=False)  # type: ignore[arg-type]


@matrix_app.command("audit-claims")
@user_errors
def audit_claims(
    file: Path = typer.Argument(..., help="A hand-written feature-table document (Markdown)."),
    matrix: Path = typer.Option(
        ..., "--matrix", "-m", help="A matrix definition or a compiled matrix JSON."
    ),
    evidence: list[Path] = EVIDENCE,
    hardware: str = typer.Option(
        None, "--hardware", help="Check on this hardware only (default: each one)."
    ),
    features: Path = FEATURES,
) -> None:
    """Check each ✅ / ❌ / ❓ claim of a support-table document against the evidence; exit 1
    when the evidence contradicts a ✅, or a bare ✅ (no qualifier, no footnote) claims a cell the
    evidence limits or does not verify."""
    from omniqual.engine.matrix_service import load_compiled_or_compile
    from omniqual.report.claims_audit import audit_claims as audit
    from omniqual.report.claims_audit import render_audit
    from omniqual.report.claims_markdown import parse_claims
    from omniqual.report.support_tables import chosen_hardware

    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError([SpecProblem(str(file), None, "", f"cannot read: {exc}")]) from None
    compiled = load_compiled_or_compile(matrix, evidence, None)
    mapping = load_feature_tables(features or default_features(matrix))
    chosen_hardware(compiled, hardware)
    result = audit(parse_claims(text), compiled, mapping, hardware)
    typer.echo(render_audit(result), nl=False)
    if result.contradicted or result.hides_limits:
        raise typer.Exit(int(Exit.FAILED))
    if not result.findings:
        raise fail(Exit.USAGE, f"{file}: no claim could be audited (see 'not mapped')")
