"""``omniqual recommend``: the row to deploy for an objective (latency, throughput, memory),
chosen only among rows the compiled matrix calls `validated` or `limited` (said, with the
limitation), whose state rests on one deployment that passed the Definition of Done's gates for a
recommended deployment, with the objective measured on that deployment; the most
memory-constrained eligible row named on its own; and every row that is not eligible, with why.
Exit 0 with a recommendation, 1 without one."""

from pathlib import Path

import typer

from omniqual.cli.exits import user_errors


def _show(label: str, candidate: object) -> None:
    from omniqual.compile.recommend import Candidate

    assert isinstance(candidate, Candidate)
    f = candidate.figure
    typer.echo(f"{label}: {candidate.row}")
    typer.echo(f"  state: {candidate.state.value}")
    if candidate.limitation is not None:
        typer.echo(f"  limited to: {candidate.limitation}")
    typer.echo(f"  recipe: {candidate.recipe or '(none)'}")
    typer.echo(f"  {f.source} = {f.value:.4g} {f.unit} (result {f.result_id})")
    for ref in candidate.evidence:
        typer.echo(f"  evidence: {ref}")


@user_errors
def recommend_command(
    matrix: Path = typer.Argument(..., help="A matrix definition (matrices/*.yaml)."),
    evidence: list[Path] = typer.Option(..., "--evidence", help="Run directories or roots."),
    objective: str = typer.Option("latency", "--objective", help="latency|throughput|memory"),
) -> None:
    """Recommend a row for an objective from recorded evidence."""
    from omniqual.compile.recommend import Objective, recommend_matrix
    from omniqual.engine.matrix_service import compile_from_dirs, load_project_matrix
    from omniqual.evidence.run_reader import find_runs, read_run

    goal = Objective(objective)
    project = load_project_matrix(matrix)
    # The same compile as `omniqual matrix compile`: a row is recommended only in the state it
    # shows there, on the results that state rests on.
    compiled = compile_from_dirs(project, evidence, None)
    located = [(result, f"{run_dir}#{result.result_id}") for run_dir in find_runs(evidence)
               for result in read_run(run_dir).results]  # fmt: skip
    (chosen,) = recommend_matrix(project.matrix, project.current_gates(), located,
                                 compiled=compiled, objectives=(goal,))  # fmt: skip
    considered = len(chosen.ranked) + len(chosen.not_eligible)
    typer.echo(f"objective: {goal.value} ({len(chosen.ranked)} eligible of {considered} rows)")
    if chosen.best is not None:
        _show("best", chosen.best)
    else:
        typer.echo("best: none (no row is eligible)")
    if chosen.memory_constrained is not None:
        _show("most memory-constrained eligible row", chosen.memory_constrained)
    for gone in chosen.not_eligible:
        typer.echo(f"not eligible: {gone.row}: {'; '.join(gone.why)}")
    if chosen.best is None:
        raise typer.Exit(1)
