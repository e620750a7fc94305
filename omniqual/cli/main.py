"""The ``omniqual`` command: parse arguments, call the library, map outcomes to exit codes."""

import logging

import typer

from omniqual import __version__
from omniqual.cli.agent import agent_command
from omniqual.cli.bench import bench_command
from omniqual.cli.ci import ci_app
from omniqual.cli.env import env_command
from omniqual.cli.evidence import evidence_app
from omniqual.cli.gate import gate_app, run_command
from omniqual.cli.matrix import matrix_app
from omniqual.cli.model import model_app
from omniqual.cli.orphans import reap_and_report
from omniqual.cli.perf import perf_app
from omniqual.cli.recommend import recommend_command
from omniqual.cli.reference import reference_app
from omniqual.cli.report import report_command
from omniqual.cli.rules import rules_command
from omniqual.cli.target import target_app

app = typer.Typer(
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    help="Qualify vLLM-Omni diffusion deployments, gate by gate, with evidence.",
)
app.command("run")(run_command)
app.add_typer(gate_app, name="gate")
app.add_typer(matrix_app, name="matrix")
app.add_typer(model_app, name="model")
app.add_typer(target_app, name="target")
app.add_typer(evidence_app, name="evidence")
app.add_typer(reference_app, name="reference")
app.add_typer(ci_app, name="ci")
app.command("report")(report_command)
app.command("env")(env_command)
app.command("bench")(bench_command)
app.command("agent")(agent_command)
app.add_typer(perf_app, name="perf")
app.command("recommend")(recommend_command)
app.command("rules")(rules_command)


def _version(value: bool) -> None:
    if value:
        typer.echo(__version__)
        raise typer.Exit()


@app.callback()
def root(
    log_level: str = typer.Option("WARNING", "--log-level", help="Python logging level."),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    logging.basicConfig(level=log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    reap_and_report()  # servers a killed run left behind (its resume included) go first


def main() -> None:
    app()
