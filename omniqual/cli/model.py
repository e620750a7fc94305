"""``omniqual model init``: draft the files that qualify a new model, from its running server."""

import asyncio
from pathlib import Path

import typer
import yaml

from omniqual.cli.exits import user_errors
from omniqual.engine.model_init.draft import InitRequest, InitResult, init_model
from omniqual.engine.model_init.probe import ProbeReport
from omniqual.specs.project import find_project

model_app = typer.Typer(no_args_is_help=True, help="Qualify a new model: draft its files.")

LOCAL_CHECKPOINT_GATES = ("strict-load",)
"""Drafted gates a URL target cannot run: they read the checkpoint where omniqual runs."""


@model_app.command("init")
@user_errors
def init(
    name: str = typer.Argument(..., help="The model's row name (matrix, contract and recipe)."),
    target: str = typer.Option(..., "--target", "-t", help="URL of the running server."),
    task: str = typer.Option("t2i", "--task", help="The task of the baseline row."),
    official: str = typer.Option(
        None, "--official", help="Official diffusers pipeline class (its __call__ defaults)."
    ),
    probe: bool = typer.Option(
        False, "--probe", help="Run the contract gate once and propose fixes (never written)."
    ),
    project: Path = typer.Option(None, "--project", help="Project root (default: found from cwd)."),
    force: bool = typer.Option(False, "--force", help="Redraft files that already exist."),
) -> None:
    """Draft matrices/NAME.yaml, gates/contracts/NAME.yaml and runners/NAME.yaml from the
    server's GET /openapi.json, /v1/models and /version; print what is left to do."""
    if not target.startswith(("http://", "https://")):
        raise ValueError(f"--target {target!r}: give the URL of the running server")
    paths = find_project(project)
    request = InitRequest(
        name=name, url=target.rstrip("/"), task=task, official=official, force=force
    )
    result, report = asyncio.run(init_model(request, paths, probe=probe))
    _print_files(result, paths.root)
    if report is not None:
        _print_probe(report)
    _print_next(result, paths.root)


def _rel(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


def _print_files(result: InitResult, root: Path) -> None:
    facts = result.facts
    verb = "drafted" if result.written else "kept (already there)"
    typer.echo(f"{facts.url} serves {facts.served_model}; GET /version: {facts.reported_version}")
    for path in result.files.all():
        typer.echo(f"{verb} {_rel(path, root)}")
    if facts.pins:
        typer.echo("pinned: " + ", ".join(f"{k}={v}" for k, v in facts.pins.items()))
    else:
        typer.echo("pinned: nothing (the server reports no revision a result records)")


def _print_probe(report: ProbeReport) -> None:
    typer.echo(
        f"\nprobe: api-contract {report.outcome.value} over {report.cases} cases; "
        f"{len(report.proposals)} proposal(s) (nothing written):"
    )
    for p in report.proposals:
        typer.echo(f"  - {p.case_id}: {p.change}")
    if report.deviations:
        typer.echo("  proposed deviations (paste under `deviations:` once you agree):")
        text = yaml.safe_dump(list(report.deviations), sort_keys=False, width=96)
        typer.echo("".join(f"    {line}\n" for line in text.splitlines()), nl=False)


def _print_next(result: InitResult, root: Path) -> None:
    facts, files = result.facts, result.files
    matrix = _rel(files.matrix, root)
    steps = []
    if result.todos:
        edited = " ".join(_rel(p, root) for p in files.all())
        steps.append(f"# fill in the {result.todos} TODO(s) in {edited}")
    steps.append(f"omniqual matrix validate {matrix}")
    if "reference-parity" in facts.gates:
        # A URL's checkpoint is not local: reference-parity compares against this directory.
        steps.append(f"omniqual reference build CHECKPOINT_DIR --model {facts.name} -o "
                     f".omniqual/references/{facts.name}  # where the checkpoint is")  # fmt: skip
    steps += [
        f"omniqual gate run {gate} --target {facts.url} --matrix {matrix}"
        for gate in facts.gates
        if gate not in LOCAL_CHECKPOINT_GATES
    ]
    local = [g for g in facts.gates if g in LOCAL_CHECKPOINT_GATES]
    if local:
        steps.append(f"# {', '.join(local)}: reads the checkpoint; run it with a launch recipe "
                     "on the host that has it (the row needs it too)")  # fmt: skip
    steps += [
        f"omniqual matrix compile {matrix} --evidence .omniqual/runs -o out/{facts.name}.json",
        f"omniqual report {matrix} --evidence .omniqual/runs --format md -o out/{facts.name}.md",
    ]
    typer.echo("\nnext:")
    for step in steps:
        typer.echo(f"  {step}")
