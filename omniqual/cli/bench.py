"""``omniqual bench``: fixed-rate open-loop benchmark phases with a progress bar, a summary
table and a result JSON. Exit 0 when every phase is VALID, 1 when one is INVALID (its figures
are not trustworthy, and the reasons say why), 2 for a usage mistake, 3 for a target fault."""

import asyncio
import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn
from rich.table import Table

from omniqual.cli.exits import Exit, user_errors

# Not a terminal (CI logs, pipes): wide enough for the summary table not to wrap.
out = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 140)


class _Bar:
    """One progress task per phase, created on the phase's first finished request."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.tasks: dict[str, TaskID] = {}

    def __call__(self, label: str, done: int, total: int) -> None:
        task = self.tasks.get(label)
        if task is None:
            task = self.tasks[label] = self.progress.add_task(f"phase {label}", total=total)
        self.progress.update(task, completed=done)


def _table(result: object) -> Table:
    from omniqual.engine.bench.result import BenchResult, shown

    assert isinstance(result, BenchResult)
    table = Table(title=f"omniqual bench: {result.target} ({result.workload})")
    for column in ("rate/s", "ok", "failed", "qps", "ach/off", "lag p99 ms", "p50 s", "p95 s",
                   "p99 s", "verdict"):  # fmt: skip
        table.add_column(column, justify="right")
    for p in result.phases:
        lag = "n/a" if p.p99_issue_lag_s is None else f"{p.p99_issue_lag_s * 1e3:.2f}"
        table.add_row(
            f"{p.offered_rate:g}", str(p.completed_requests), str(p.failed_requests),
            f"{p.throughput_qps:.2f}", f"{p.achieved_over_offered:.4f}", lag,
            shown(p.latency_p50), shown(p.latency_p95), shown(p.latency_p99), p.verdict.value,
        )  # fmt: skip
    return table


@user_errors
def bench_command(
    target: str = typer.Option(..., "--target", "-t", help="A URL or a launch-recipe id."),
    workload: Path = typer.Option(..., "--workload", "-w", help="A workload spec (YAML mix)."),
    rate: float = typer.Option(None, "--rate", help="One offered rate (requests/s)."),
    rates: str = typer.Option(None, "--rates", help="Several offered rates: R1,R2,..."),
    sweep: bool = typer.Option(False, "--sweep", help="Search the saturation rate."),
    profile: str = typer.Option(
        "poisson", "--profile", help="poisson, gamma:CV, constant or trace:FILE."
    ),
    duration: float = typer.Option(None, "--duration", help="Seconds per phase."),
    requests: int = typer.Option(None, "--requests", help="Requests per phase."),
    seed: int = typer.Option(0, "--seed", help="Seed of the arrival schedule and the mix."),
    output: Path = typer.Option(None, "-o", "--output", help="Write the result JSON here."),
    slo: str = typer.Option(
        None, "--slo", help="Sweep objective pPCT:SECONDS (default p50 within 3x solo latency)."
    ),
    max_issue_lag_ms: float = typer.Option(
        10.0, "--max-issue-lag-ms", help="p99 issue lag above this makes a phase INVALID."
    ),
    max_rate: float = typer.Option(1000.0, "--max-rate", help="Sweep: highest rate probed."),
    in_flight_cap: int = typer.Option(
        None, "--in-flight-cap", help="Cap on requests in flight (waits count in latency)."
    ),
) -> None:
    """Run fixed-rate open-loop phases against a target; latency is timed from the schedule."""
    from omniqual.engine.bench.options import make_options
    from omniqual.engine.bench.result import shown
    from omniqual.engine.bench.runner import run_bench
    from omniqual.engine.bench.transport import event_loop_factory

    options = make_options(
        target=target, workload=workload, rate=rate, rates=rates, sweep=sweep,
        profile=profile, duration_s=duration, requests=requests, seed=seed, slo=slo,
        max_p99_issue_lag_ms=max_issue_lag_ms, in_flight_cap=in_flight_cap, max_rate=max_rate,
    )  # fmt: skip
    if not target.startswith(("http://", "https://")):
        out.print(f"launching recipe {target} (an embedded server can take minutes to be ready)")
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with (
        Progress(*columns, console=out, transient=False, refresh_per_second=2) as progress,
        asyncio.Runner(loop_factory=event_loop_factory()) as runner,
    ):
        result = runner.run(run_bench(options, _Bar(progress)))
    out.print(_table(result))
    for p in result.phases:
        for claim in p.percentiles:
            if isinstance(claim.value, str):
                out.print(f"  {p.offered_rate:g}/s p{claim.percentile:g}: {shown(claim.value)}"
                          f" ({claim.samples} successful samples)")  # fmt: skip
    if result.sweep is not None:
        s = result.sweep
        found = "none passed" if s.saturation_rate is None else f"{s.saturation_rate:.4g}/s"
        if s.stop_reason == "max_rate_passes":
            found = f"above {found} (--max-rate still passed)"
        slo = f"p{s.slo_percentile:g} <= {s.slo_bound_s:.3g} s"
        line = f"saturation ({slo}): {found} [{s.stop_reason}]"
        out.print(line, markup=False)
    out.print(f"verdict: {result.verdict.value}")
    for reason in result.reasons:
        out.print(f"  - {reason}", markup=False)
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(result.model_dump_json(indent=2) + "\n", encoding="utf-8")
        out.print(f"wrote {output}", markup=False)
    raise typer.Exit(int(Exit.OK if result.verdict.value == "VALID" else Exit.FAILED))
