"""``omniqual perf``: owned perf baselines and vLLM-Omni perf configs.

``perf baseline update`` writes a row's baseline from recorded perf results (one run directory
per run of the gate, at least three, each of one or more server launches; with ``--add``, added
to the launches the file already holds) and prints the diff
against the file it replaces with what its sessions can resolve (exit 0); it refuses
(exit 2) too few launches, a threshold below the smallest its sessions can hold (naming
the one it can), or to replace a baseline of another serve configuration.
``perf params`` turns one case of a vLLM-Omni perf config JSON into the perf gate's ``params``
block (the gate also reads such a file itself: ``vllm_omni_config``).
"""

from pathlib import Path

import typer
import yaml

from omniqual.cli.exits import user_errors

perf_app = typer.Typer(no_args_is_help=True, help="Perf baselines and vLLM-Omni perf configs.")
baseline_app = typer.Typer(no_args_is_help=True, help="Owned perf baselines.")
perf_app.add_typer(baseline_app, name="baseline")


@baseline_app.command("update")
@user_errors
def update_command(
    from_runs: list[Path] = typer.Option(
        ..., "--from", help="A run directory with a perf result; once per run (>= 3)."
    ),
    row: str = typer.Option(..., "--row", help="Row selector naming exactly one row."),
    owner: str = typer.Option(None, "--owner", help="Who owns the baseline (default: kept)."),
    baselines: Path = typer.Option(
        None, "--baselines", help="Baseline directory (default: gates/perf-baselines)."
    ),
    threshold: float = typer.Option(
        None, "--threshold", min=0.0, max=1.0,
        help="Tolerated relative change, e.g. 0.15 (default: kept, else 0.10); refused below "
        "the smallest the launches' spread can hold.",
    ),
    add: bool = typer.Option(
        False, "--add",
        help="Keep the baseline's own launches and add these runs' to them (runs from another "
        "day or host of its class: the spread over time later runs are judged against).",
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the diff, write nothing."),
) -> None:
    """Set a row's perf baseline from recorded perf results; print the diff for review."""
    from omniqual.domain.axes import Selector
    from omniqual.engine.perf_baseline import latest_perf_result, plan_update
    from omniqual.specs.matrix import load_catalog
    from omniqual.specs.project import find_project

    project = find_project()
    directory = baselines or project.root / "gates" / "perf-baselines"
    selector = Selector.parse(row)
    defaults = load_catalog(project.axes_file).defaults()
    results = [latest_perf_result(run, selector, defaults) for run in from_runs]
    update = plan_update(results, directory, owner, threshold, keep=add)
    verb = "would write" if dry_run else ("updated" if update.old else "created")
    typer.echo(f"{verb} {update.path}")
    for line in update.diff:
        typer.echo(f"  {line}")
    if not dry_run:
        update.write()


@perf_app.command("params")
@user_errors
def params_command(
    vllm_omni_config: Path = typer.Option(..., "--vllm-omni-config", help="A perf config JSON."),
    case: str = typer.Option(None, "--case", help="test_name/benchmark name (default: first)."),
) -> None:
    """Print the perf gate params for one case of a vLLM-Omni perf config (YAML)."""
    from omniqual.checks.perf.params import PerfParams
    from omniqual.checks.perf.upstream import params_from_case
    from omniqual.specs.vllm_omni_perf import load_perf_config, select_case

    test, chosen = select_case(load_perf_config(vllm_omni_config), case)
    params = params_from_case(PerfParams(), chosen)
    data = params.model_dump(mode="json", exclude_defaults=True)
    typer.echo(f"# from {vllm_omni_config}: {test.test_name}/{chosen.name}; serve args "
               f"{test.server_params.serve_args} belong in the row's launch recipe")  # fmt: skip
    typer.echo(yaml.safe_dump({"params": data}, sort_keys=False).rstrip())
