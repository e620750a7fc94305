"""``omniqual evidence verify RUN_DIR...``: is recorded evidence still what its journal says?

Exit 0 when every run is intact, 1 naming each mismatch, 2 when a path is not a run directory.
The checks live in :mod:`omniqual.engine.verify`; this module only formats them.
"""

import json
from pathlib import Path

import typer

from omniqual.cli.exits import Exit, fail

evidence_app = typer.Typer(no_args_is_help=True, help="Check recorded evidence.")


@evidence_app.command("verify")
def verify_command(
    run_dirs: list[Path] = typer.Argument(..., help="Run directories (holding journal.jsonl)."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per run."),
) -> None:
    """Recompute every artifact's sha256 and check each journal's integrity."""
    from omniqual.engine.verify import NotARunDirectory, verify_runs

    try:
        checked = verify_runs(run_dirs)
    except NotARunDirectory as exc:
        raise fail(Exit.USAGE, str(exc)) from None
    for run in checked:
        if as_json:
            typer.echo(json.dumps({
                "run_dir": str(run.run_dir), "run_id": run.run_id, "intact": run.intact,
                "results": run.results, "artifacts_checked": run.artifacts_checked,
                "problems": list(run.problems), "notes": list(run.notes),
            }, sort_keys=True))  # fmt: skip
            continue
        state = "intact" if run.intact else f"{len(run.problems)} problem(s)"
        typer.echo(f"{run.run_dir}: {state} ({run.results} results,"
                   f" {run.artifacts_checked} artifacts hashed)")  # fmt: skip
        for problem in run.problems:
            typer.echo(f"  MISMATCH {problem}")
        for note in run.notes:
            typer.echo(f"  note {note}")
    if not all(run.intact for run in checked):
        raise typer.Exit(int(Exit.FAILED))
