"""``omniqual ci plan MATRIX``: the matrix's gate work as a Buildkite or GitHub Actions pipeline.

The plan is made by :mod:`omniqual.engine.ci.plan` and written by :mod:`omniqual.engine.ci.render`;
this module parses options, writes the file and names the rows no step can run.
"""

from pathlib import Path

import typer

from omniqual.cli.exits import user_errors

ci_app = typer.Typer(no_args_is_help=True, help="Fan a matrix out over an existing CI system.")


@ci_app.command("plan")
@user_errors
def plan_command(
    matrix: Path = typer.Argument(..., help="A matrix definition."),
    fmt: str = typer.Option(..., "--format", "-f", help="buildkite or github-actions."),
    tracks: list[str] = typer.Option(
        [],
        "--tracks",
        "-t",
        help="Tracks whose gates run: function, accuracy, performance, reliability (repeat or "
        "comma-separate; default: every gate).",
    ),
    level: str = typer.Option(
        None,
        "--level",
        help="A vLLM-Omni CI level (L1-L5): only the tracks that run there (function: L1-L4; "
        "accuracy, performance: L3-L4; reliability: L5).",
    ),
    row: str = typer.Option("", "--row", help="Row selector, e.g. 'model=sd3-tiny'."),
    queues: list[str] = typer.Option(
        [],
        "--queue",
        help="HARDWARE=QUEUE: the agent queue (Buildkite) / runner label (GitHub) of a hardware "
        "axis value (default: `cpu` for cpu-* hosts, else the hardware value itself).",
    ),
    setup: list[str] = typer.Option(
        [], "--setup", help="A command every step runs first, e.g. 'pip install .'."
    ),
    report_queue: str = typer.Option("cpu", "--report-queue", help="Queue of the report step."),
    output: Path = typer.Option(None, "-o", "--output", help="Default: standard output."),
) -> None:
    """One step per launch recipe and hardware queue running `omniqual gate run`, then a step
    merging the evidence and rendering the report."""
    from omniqual.engine.ci.plan import parse_queues, parse_tracks, plan_ci, tracks_at_level
    from omniqual.engine.ci.render import CiFormat, render_pipeline

    formats = [f.value for f in CiFormat]
    if fmt not in formats:
        raise ValueError(f"--format must be {' or '.join(formats)}, not {fmt!r}")
    chosen = parse_tracks(tracks) if tracks else ()  # none: every gate, tracked or not
    if level is not None:
        chosen = tracks_at_level(level, chosen)
    plan = plan_ci(matrix, tracks=chosen, row_selector=row,
                   queues=parse_queues(queues))  # fmt: skip
    if not plan.steps:
        raise ValueError(f"no row of {matrix} selected by --row {row!r} needs a gate of the "
                         "chosen tracks: the pipeline would run nothing")  # fmt: skip
    text = render_pipeline(plan, CiFormat(fmt), setup=setup, report_queue=report_queue)
    for unplanned in plan.unplanned_rows:
        typer.echo(f"note: row {unplanned} has no recipe; it stays `not tested`", err=True)
    gates = sum(len(step.runs) for step in plan.steps)
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {output}", err=True)
    typer.echo(f"{len(plan.steps)} step(s), {gates} gate run(s), then merge and report", err=True)
