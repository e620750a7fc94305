"""``omniqual env``: the environment fingerprint every run records."""

import typer

from omniqual.cli.exits import user_errors


@user_errors
def env_command(
    as_json: bool = typer.Option(True, "--json/--text", help="JSON (default) or key: value."),
) -> None:
    """Print the environment fingerprint (no secrets; the hostname only as a hash)."""
    from omniqual.deploy.fingerprint import collect_fingerprint

    fingerprint = collect_fingerprint()
    if as_json:
        typer.echo(fingerprint.model_dump_json(indent=2))
        return
    for key, value in sorted(fingerprint.model_dump(mode="json").items()):
        typer.echo(f"{key}: {value}")
