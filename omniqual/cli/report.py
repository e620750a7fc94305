"""``omniqual report``: the PR evidence report from recorded runs and a matrix."""

from pathlib import Path

import typer

from omniqual.cli.exits import user_errors


@user_errors
def report_command(
    matrix: Path = typer.Argument(..., help="A matrix definition."),
    evidence: list[Path] = typer.Option(..., "--evidence", "-e", help="Run dirs or run roots."),
    fmt: str = typer.Option("md", "--format", "-f", help="md, html or json."),
    title: str = typer.Option("", "--title", help="Report title."),
    output: Path = typer.Option(None, "-o", "--output", help="Default: standard output."),
) -> None:
    """Render the PR evidence report (contract, matrix, reproduction, raw figures, faults)."""
    from omniqual.cli.outputs import run_evidence
    from omniqual.report.render import render_run_report

    if fmt not in ("md", "html", "json"):
        raise ValueError(f"--format must be md, html or json, not {fmt!r}")
    text = render_run_report(run_evidence(matrix, evidence, title), fmt)  # type: ignore[arg-type]
    if output is None:
        typer.echo(text, nl=False)
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {output}", err=True)
