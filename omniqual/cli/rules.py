"""``omniqual rules``: every rule of the production skill and the check that decides it.

Without evidence: how many rules of each group are decided, partial, human, missing or out of
scope, then one line per rule. With ``--matrix`` and ``--evidence``: per rule and row of that
matrix, whether the rule was decided there and by which result (a gate's latest result on the
row passed or failed). The evaluation is the report's (``omniqual.report.rule_verdicts``), so
this listing and the run report's "Skill rules covered" block never disagree."""

from pathlib import Path

import typer

from omniqual.cli.exits import user_errors


def _print_coverage(catalogue: object) -> None:
    from omniqual.domain.skill_rules import STATUS_ORDER, RuleCatalogue, coverage, totals
    from omniqual.report.skill_rules_view import trace_text

    assert isinstance(catalogue, RuleCatalogue)
    groups = coverage(catalogue)
    names = [s.value for s in STATUS_ORDER]
    typer.echo(f"{'group':<6} {'rules':>5} " + " ".join(f"{n:>12}" for n in names))
    for g in groups:
        cells = " ".join(f"{g.counts[s]:>12}" for s in STATUS_ORDER)
        typer.echo(f"{g.group:<6} {g.total:>5} {cells}")
    total = totals(groups)
    cells = " ".join(f"{total[s]:>12}" for s in STATUS_ORDER)
    typer.echo(f"{'total':<6} {sum(total.values()):>5} {cells}")
    typer.echo("")
    for rule in catalogue.rules:
        typer.echo(f"{rule.id}  {rule.status.value:<12} {rule.mode.value:<13} {rule.statement}")
        typer.echo(f"        decided by: {trace_text(rule)}")
        gap = rule.missing or rule.reason
        if gap:
            typer.echo(f"        {'reason' if rule.reason else 'missing'}: {gap}")


@user_errors
def rules_command(
    matrix: Path | None = typer.Option(None, "--matrix", help="A matrix definition."),
    evidence: list[Path] = typer.Option([], "--evidence", help="Run directories or roots."),
    root: Path | None = typer.Option(None, "--root", help="Project root (default: found)."),
) -> None:
    """The skill's rules and what decides each: coverage, or per row of a matrix."""
    from omniqual.specs.gates import load_gates
    from omniqual.specs.matrix import load_catalog
    from omniqual.specs.project import find_project
    from omniqual.specs.rules import load_rule_catalogue, rules_dir

    if (matrix is None) != (not evidence):
        raise typer.BadParameter("--matrix and --evidence go together")
    project = find_project(root or (matrix.resolve().parent if matrix else None))
    gates = load_gates(project.gates, load_catalog(project.axes_file), project.root)
    kinds = {gate_id: gate.spec.kind for gate_id, gate in gates.items()}
    catalogue = load_rule_catalogue(rules_dir(project.gates), kinds)
    if matrix is None:
        _print_coverage(catalogue)
        return
    from omniqual.engine.matrix_service import load_project_matrix
    from omniqual.evidence.run_reader import iter_results
    from omniqual.report.rule_verdicts import rule_verdicts

    rows = [str(row.key) for row in load_project_matrix(matrix).matrix.rows]
    for judged in rule_verdicts(catalogue, rows, iter_results(evidence)):
        rule = judged.rule
        typer.echo(f"{rule.id}  {rule.status.value}  {rule.statement}")
        for verdict in judged.rows:
            row = verdict.row
            mark = "decided    " if verdict.decided else "not decided"
            by = f" by {verdict.result_id}" if verdict.result_id else ""
            typer.echo(f"    {mark} {row}{by} ({verdict.why})")
