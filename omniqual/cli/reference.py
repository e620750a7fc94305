"""``omniqual reference build RECIPE|CHECKPOINT -o DIR``: the official pipeline's outputs for the
``reference-parity`` request set, made once where the checkpoint is, as a verified directory."""

from pathlib import Path

import typer

from omniqual.cli.exits import Exit, fail, user_errors

reference_app = typer.Typer(no_args_is_help=True, help="Reference outputs for reference-parity.")


@reference_app.command("build")
@user_errors
def build_command(
    source: str = typer.Argument(..., help="A launch-recipe id or a local checkpoint directory."),
    out: Path = typer.Option(..., "--output", "-o", help="The reference directory to write."),
    model: str = typer.Option(
        None, "--model", help="Contract model (gates/contracts/<model>.yaml); needed for a path."
    ),
    dtype: str = typer.Option(None, "--dtype", help="Served dtype (default: recipe's, or bf16)."),
    python: str = typer.Option(None, "--python", help="Interpreter of the target environment."),
    gate: str = typer.Option("reference-parity", "--gate", help="Gate whose request set to use."),
    root: Path = typer.Option(None, "--root", help="Project root."),
) -> None:
    """Run the contract's official diffusers pipeline on the gate's requests; write the media
    and a manifest (request parameters and sha256 per file)."""
    from omniqual.deploy.reference_runner import ReferenceRunError
    from omniqual.engine.targets.reference_build import build_reference_dir, recipe_checkpoint
    from omniqual.specs.project import find_project
    from omniqual.specs.recipes import find_recipe

    project = find_project(root)
    path = Path(source)
    env: dict[str, str] = {}
    sha: str | None = None
    if path.is_dir():
        if not model:
            raise fail(Exit.USAGE, "a checkpoint directory needs --model (its contract)")
        checkpoint, served_dtype = path, dtype or "bf16"
    else:
        try:
            found = recipe_checkpoint(find_recipe(source, project.runners).recipe)
        except ValueError as exc:
            raise fail(Exit.USAGE, str(exc)) from None
        checkpoint, served_dtype, env, sha = found.checkpoint, dtype or found.dtype, found.env, (
            found.checkpoint_sha256)  # fmt: skip
        model = model or found.model
    try:
        built = build_reference_dir(
            model=model, checkpoint=checkpoint, out=out, root=project.root, gate=gate,
            dtype=served_dtype, python=python, env=env, checkpoint_sha256=sha,
        )  # fmt: skip
    except ReferenceRunError as exc:
        raise fail(Exit.TARGET, f"reference cannot run: {exc}") from None
    typer.echo(f"wrote {built.manifest_path} ({built.cases} cases)")
    if built.failed_cases:
        typer.echo(f"the official pipeline raised on {len(built.failed_cases)} case(s):"
                   f" {', '.join(built.failed_cases)}", err=True)  # fmt: skip
        raise typer.Exit(int(Exit.FAILED))
