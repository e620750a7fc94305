"""``omniqual report``: the PR evidence report from recorded runs and a matrix."""

import os
from dataclasses import replace
from pathlib import Path

import typer

from omniqual.cli.exits import user_errors

STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


@user_errors
def report_command(
    matrix: Path = typer.Argument(..., help="A matrix definition."),
    evidence: list[Path] = typer.Option(..., "--evidence", "-e", help="Run dirs or run roots."),
    fmt: str = typer.Option(
        "md",
        "--format",
        "-f",
        help="md (fits a PR comment), md-full, html, json or step-summary.",
    ),
    title: str = typer.Option("", "--title", help="Report title."),
    output: Path = typer.Option(None, "-o", "--output", help="Default: standard output."),
    csv_dir: Path = typer.Option(
        None, "--csv-dir", help="Also write every table of the report as CSV into this directory."
    ),
    full_report: str = typer.Option(
        "", "--full-report", help="Where the full report is (said when Markdown is trimmed)."
    ),
    claims: Path = typer.Option(
        None, "--claims",
        help="A hand-written support table (vLLM-Omni's diffusion_features.md shape): its "
        "contradictions of the evidence open the report's Support claims section.",
    ),
    append_step_summary: bool = typer.Option(
        False,
        "--append-step-summary",
        help=f"Also append the step-summary form to ${STEP_SUMMARY_ENV} (GitHub Actions).",
    ),
) -> None:
    """Render the PR evidence report (checklist sections, coverage map, recipes, raw figures)."""
    from omniqual.cli.outputs import run_evidence
    from omniqual.report.csv_export import write_csv
    from omniqual.report.render import RUN_FORMATS, render_run_report
    from omniqual.report.run_views import run_report_view

    if fmt not in RUN_FORMATS:
        raise ValueError(f"--format must be one of {', '.join(RUN_FORMATS)}, not {fmt!r}")
    summary_path = os.environ.get(STEP_SUMMARY_ENV, "")
    if append_step_summary and not summary_path:
        raise ValueError(f"--append-step-summary: ${STEP_SUMMARY_ENV} is not set")
    report_dir = output.parent if output is not None else None
    loaded = run_evidence(
        matrix, evidence, title, report_dir=report_dir, full_report=full_report, claims=claims
    )
    text = render_run_report(loaded, fmt)  # type: ignore[arg-type]
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {output}", err=True)
    if csv_dir is not None:
        # The CSV files link the records relative to their own directory.
        written = write_csv(run_report_view(replace(loaded, report_dir=csv_dir)), csv_dir)
        typer.echo(f"wrote {len(written)} CSV table(s) to {csv_dir}", err=True)
    if append_step_summary:
        with Path(summary_path).open("a", encoding="utf-8") as handle:
            handle.write(render_run_report(loaded, "step-summary"))
        typer.echo(f"appended the step summary to ${STEP_SUMMARY_ENV}", err=True)
