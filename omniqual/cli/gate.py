"""``omniqual gate list|run`` and ``omniqual run CAMPAIGN``."""

import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

import typer

from omniqual.cli.agent import agent_access, campaign_agents
from omniqual.cli.console import ConsoleObserver
from omniqual.cli.exits import Exit, fail, user_errors
from omniqual.cli.junit import write_junit
from omniqual.domain.agent import TOKEN_ENV
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.result import GateResult

gate_app = typer.Typer(no_args_is_help=True, help="Gates: list them, run one against a target.")


def exit_code(results: Sequence[GateResult]) -> Exit:
    """3 when a gate errored; 2 when one was skipped (every gate a run plans is one its row
    needs, and a skip means its contract or spec was missing: a spec error, never "all
    passed"); 1 when one failed or was invalid; else 0."""
    outcomes = {r.outcome for r in results}
    if GateOutcome.ERRORED in outcomes:
        return Exit.TARGET
    if GateOutcome.SKIPPED in outcomes:
        return Exit.USAGE
    if outcomes & {GateOutcome.FAILED, GateOutcome.INVALID}:
        return Exit.FAILED
    return Exit.OK


def skipped_error(results: Sequence[GateResult]) -> typer.Exit:
    """Exit 2, naming every skipped gate with its reason (what to add or fix)."""
    skipped = [r for r in results if r.outcome is GateOutcome.SKIPPED]
    lines = [
        f"{r.gate_id} on {r.row}: {'; '.join(r.reasons) or 'no reason recorded'}" for r in skipped
    ]
    return fail(
        Exit.USAGE,
        f"{len(skipped)} required gate(s) skipped, so their rows stay `not tested` (a missing "
        "contract or spec):\n  " + "\n  ".join(lines),
    )


@gate_app.command("list")
@user_errors
def list_gates(root: Path = typer.Option(None, "--root", help="Project root.")) -> None:
    """Every gate spec in the project, with its kind and version."""
    from omniqual.specs.gates import load_gates
    from omniqual.specs.matrix import load_catalog
    from omniqual.specs.project import find_project

    project = find_project(root)
    for gate_id, gate in sorted(load_gates(project.gates, load_catalog(project.axes_file)).items()):
        scope = gate.spec.applies_to or "every row"
        levels = "-".join(dict.fromkeys(gate.spec.ci_levels[:1] + gate.spec.ci_levels[-1:]))
        track = f"{gate.spec.track.value} ({levels})" if gate.spec.track else "none"
        typer.echo(
            f"{gate_id}  kind={gate.spec.kind}  v{gate.spec.version}  track={track}  ({scope})  "
            f"{gate.spec.title}"
        )


@gate_app.command("run")
@user_errors
def run_gate_command(
    gate: str = typer.Argument(..., help="Gate id (see `omniqual gate list`)."),
    target: str = typer.Option(..., "--target", "-t", help="A URL or a launch-recipe id."),
    row: str = typer.Option(
        "", "--row", help="Row selector, e.g. 'model=sd3-tiny,api_mode=images-generations'."
    ),
    matrix: Path = typer.Option(
        None, "--matrix", "-m", help="Default: matrices/embedded-cpu.yaml."
    ),
    evidence: Path = typer.Option(Path(".omniqual/runs"), "--evidence", help="Run root."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per result on stdout."),
    junit: Path = typer.Option(None, "--junit", help="Also write a JUnit XML file."),
    server_pid: int = typer.Option(
        None,
        "--server-pid",
        help="For a URL target on this host: the server's process id, so abort and soak can "
        "watch its CPU time, memory and files (without it those signals are absent: invalid).",
    ),
    agent: str = typer.Option(
        None, "--agent",
        help="For a URL target on another host: the URL of the `omniqual agent` beside the "
        "server, which reads its process tree for abort and soak as --server-pid does here.",
    ),
    agent_token_file: Path = typer.Option(
        None, "--agent-token-file",
        help=f"The agent's bearer token (default: the {TOKEN_ENV} environment variable).",
    ),
) -> None:
    """Run one gate on every matching row against a URL or a launched recipe."""
    from omniqual.deploy.reaper import install_signal_handlers
    from omniqual.engine.single_gate import run_single_gate

    access = agent_access(agent, agent_token_file)

    # Servers are launched from worker threads; only the main thread can make SIGTERM stop them.
    install_signal_handlers()
    with ConsoleObserver(as_json=as_json) as observer:
        results = asyncio.run(
            run_single_gate(
                gate, target, row, matrix=matrix, evidence_root=evidence,
                command=sys.argv, observe=observer, server_pid=server_pid, agent=access,
            )
        )  # fmt: skip
    if junit is not None:
        write_junit(results, junit, evidence_root=evidence)
    code = exit_code(results)
    if code is Exit.USAGE:
        raise skipped_error(results)
    raise typer.Exit(int(code))


def _say_written(written: list[Path]) -> None:
    """One line per report file; a directory of many (the CSV tables, matrix pages) as one."""
    by_dir: dict[Path, list[Path]] = {}
    for path in written:
        by_dir.setdefault(path.parent, []).append(path)
    for directory, paths in by_dir.items():
        if len(paths) > 8:
            typer.echo(f"wrote {len(paths)} files in {directory}/", err=True)
        else:
            for path in paths:
                typer.echo(f"wrote {path}", err=True)


@user_errors
def run_command(
    campaign: Path = typer.Argument(..., help="A campaign file (rows x gates, recipes, report)."),
    output: Path = typer.Option(Path("out"), "--output", "-o", help="Where reports are written."),
    resume: Path = typer.Option(None, "--resume", help="Continue a killed run (its directory)."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per result on stdout."),
    junit: Path = typer.Option(None, "--junit", help="Also write a JUnit XML file."),
    strict: bool = typer.Option(
        False, "--strict", help="Exit 1 when a gate failed (default: the campaign's policy)."
    ),
    jobs: str = typer.Option(
        "1",
        "--jobs",
        "-j",
        help="Launch groups run at once: a number, or auto (as many as the host's GPUs, else "
        "its cores, hold); each gets devices of its own (a number on a host without GPUs shares "
        "its cores), and gates that measure time or memory run alone. 1: one after another.",
    ),
    repeat: int = typer.Option(
        1,
        "--repeat",
        min=1,
        help="Run the campaign this many times on the same build and write the verdict "
        "stability table (stability.md/.html/.json): how often each gate's verdict and each "
        "row's state agreed.",
    ),
    agents: list[str] = typer.Option(
        [], "--agent",
        help="RECIPE=URL (repeatable): the `omniqual agent` beside the server of a target the "
        "campaign uses by URL, read for abort and soak; a bare URL when there is one such target.",
    ),
    agent_token_file: Path = typer.Option(
        None, "--agent-token-file",
        help=f"The agents' bearer token (default: the {TOKEN_ENV} environment variable).",
    ),
) -> None:
    """Run a campaign, compile its matrix and render the evidence report."""
    from omniqual.cli.outputs import write_reports
    from omniqual.deploy.reaper import install_signal_handlers
    from omniqual.engine.run.campaign import run_campaign
    from omniqual.engine.run.resources import parse_jobs
    from omniqual.specs.campaign import load_campaign

    count = parse_jobs(jobs)
    loaded = load_campaign(campaign)
    by_url = sorted(loaded.campaign.targets)
    access = campaign_agents(agents, agent_token_file, by_url)
    install_signal_handlers()  # servers launched from worker threads stop on SIGTERM too
    outcomes = []
    for attempt in range(repeat):  # a resumed run is the first; each repeat is a run of its own
        if repeat > 1:
            typer.echo(f"run {attempt + 1} of {repeat}", err=True)
        with ConsoleObserver(as_json=as_json) as observer:
            outcomes.append(asyncio.run(run_campaign(
                loaded, command=sys.argv, resume=resume if attempt == 0 else None,
                observe=observer, jobs=count, agents=access,
            )))  # fmt: skip
    outcome = outcomes[-1]
    table = None
    refused = False
    if repeat > 1:
        from omniqual.domain.verdict_stability import MixedBuilds
        from omniqual.engine.verdict_stability import stability_of

        try:
            table = stability_of(loaded.matrix_path, [o.run_dir for o in outcomes])
        except MixedBuilds as exc:  # a resumed first run of another build: the reports still go out
            typer.echo(f"no verdict-stability table: {exc}", err=True)
            refused = True
    written = write_reports(outcome, loaded, output, stability=table)
    if junit is not None:
        write_junit(list(outcome.results), junit, evidence_root=outcome.run_dir.parent)
    _say_written(written)
    counts = ", ".join(f"{n} {s.value}" for s, n in outcome.compiled.counts().items())
    typer.echo(f"run {outcome.run_dir}: {len(outcome.results)} results; matrix: {counts}", err=True)
    moved = refused  # reruns that cannot be compared show no stability either
    if table is not None:
        from omniqual.cli.evidence import report_stability

        moved = report_stability(table, output)
    code = exit_code([r for o in outcomes for r in o.results])
    if code is Exit.TARGET:
        raise fail(Exit.TARGET, "a gate errored (harness or infrastructure fault); see the report")
    if code is Exit.USAGE:  # whatever the exit policy: a skip is a spec error, not a finding
        raise skipped_error(outcome.results)
    if (code is Exit.FAILED or moved) and (strict or loaded.campaign.exit_policy == "strict"):
        raise typer.Exit(int(Exit.FAILED))
