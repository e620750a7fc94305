"""``omniqual evidence verify RUN_DIR...`` and ``omniqual evidence merge DIR... -o DIR``.

verify: is recorded evidence still what its journal says? Exit 0 when every run is intact, 1
naming each mismatch (a broken link in a journal's hash chain names its line; records removed
from a journal or its anchored last line altered name the anchor they contradict; a journal
written before chaining is at best "intact, but unchained", one written before anchoring "intact,
but unanchored"), 2 when a path is neither a run directory nor a directory holding runs (a merged
root is verified run by run). merge: gather the runs of
CI agents into one run root; exit 1 for a conflict or damaged evidence (named), 2 for a path
that holds no runs. The work lives in :mod:`omniqual.evidence.verify` and
:mod:`omniqual.evidence.merge`; this module only formats it.
"""

import json
from pathlib import Path

import typer

from omniqual.cli.exits import Exit, fail, user_errors
from omniqual.domain.verdict_stability import StabilityTable

evidence_app = typer.Typer(no_args_is_help=True, help="Check recorded evidence.")


@evidence_app.command("verify")
def verify_command(
    run_dirs: list[Path] = typer.Argument(
        ..., help="Run directories (holding journal.jsonl), or directories of runs."
    ),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per run."),
) -> None:
    """Recompute every artifact's sha256 and check each journal's integrity, hash chain and
    anchors."""
    from omniqual.evidence.verify import NotARunDirectory, verify_runs

    try:
        checked = verify_runs(_expand_roots(run_dirs))
    except NotARunDirectory as exc:
        raise fail(Exit.USAGE, str(exc)) from None
    for run in checked:
        if as_json:
            typer.echo(json.dumps({
                "run_dir": str(run.run_dir), "run_id": run.run_id, "intact": run.intact,
                "results": run.results, "artifacts_checked": run.artifacts_checked,
                "problems": list(run.problems), "notes": list(run.notes), "chain": run.chain,
                "anchored": run.anchored,
            }, sort_keys=True))  # fmt: skip
            continue
        state = "intact" if run.intact else f"{len(run.problems)} problem(s)"
        if run.intact and run.chain in ("unchained", "partly chained"):
            state = f"intact, but {run.chain} (the journal predates chaining)"
        elif run.intact and not run.anchored:
            state = "intact, but unanchored (the journal predates anchoring)"
        typer.echo(f"{run.run_dir}: {state} ({run.results} results,"
                   f" {run.artifacts_checked} artifacts hashed)")  # fmt: skip
        for problem in run.problems:
            typer.echo(f"  MISMATCH {problem}")
        for note in run.notes:
            typer.echo(f"  note {note}")
    if not all(run.intact for run in checked):
        raise typer.Exit(int(Exit.FAILED))


def _expand_roots(paths: list[Path]) -> list[Path]:
    """Each path that is a directory of runs (no journal of its own) stands for its runs; any
    other path is kept, so verify names it when it is not a run directory."""
    from omniqual.evidence.journal import JOURNAL_NAME
    from omniqual.evidence.run_reader import find_runs

    expanded: list[Path] = []
    for path in paths:
        runs = [] if (path / JOURNAL_NAME).is_file() or not path.is_dir() else find_runs([path])
        expanded.extend(runs or [path])
    return list(dict.fromkeys(expanded))


@evidence_app.command("merge")
def merge_command(
    sources: list[Path] = typer.Argument(..., help="Run directories or directories of runs."),
    output: Path = typer.Option(..., "-o", "--output", help="The merged run root."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object describing the merge."),
) -> None:
    """Merge the runs of several evidence directories into one root, each run once."""
    from omniqual.evidence.errors import StoreError
    from omniqual.evidence.merge import MergeConflict, merge_evidence

    try:
        merged = merge_evidence(sources, output)
    except MergeConflict as exc:
        raise fail(Exit.FAILED, str(exc)) from None
    except StoreError as exc:
        raise fail(Exit.USAGE, str(exc)) from None
    if as_json:
        typer.echo(json.dumps({
            "out": str(merged.out), "runs": list(merged.runs), "written": list(merged.written),
            "results": merged.results, "artifacts_copied": merged.artifacts,
            "notes": list(merged.notes),
        }, sort_keys=True))  # fmt: skip
        return
    typer.echo(f"{merged.out}: {len(merged.runs)} run(s), {merged.results} results "
               f"({len(merged.written)} run(s) written, {merged.artifacts} artifacts "
               "copied and verified)")  # fmt: skip
    for note in merged.notes:
        typer.echo(f"  note {note}")


@evidence_app.command("stability")
@user_errors
def stability_command(
    runs: list[Path] = typer.Argument(
        ..., help="Run directories of the same build (or directories of runs), oldest first."
    ),
    matrix: Path = typer.Option(
        None, "--matrix", "-m", help="Default: matrices/embedded-cpu.yaml."
    ),
    output: Path = typer.Option(
        None, "-o", "--output", help="Also write stability.md, .html and .json here."
    ),
) -> None:
    """How often reruns agreed: per gate on a row, every run's verdict and how many decided;
    per row, its state. Exit 1 when a verdict moved between passed and failed or a row's state
    changed; exit 2 when the runs are not all of one build."""
    from omniqual.engine.verdict_stability import stability_of

    if report_stability(stability_of(matrix, runs), output):
        raise typer.Exit(int(Exit.FAILED))


def report_stability(table: StabilityTable, output: Path | None) -> bool:
    """Say the stability table's summary (and write its files); True when a verdict moved
    between passed and failed or a row's state changed."""
    from omniqual.report.stability_views import render_stability, stability_view

    if output is not None:
        output.mkdir(parents=True, exist_ok=True)
        for fmt in ("md", "html", "json"):
            path = output / f"stability.{fmt}"
            path.write_text(render_stability(table, fmt), encoding="utf-8")
            typer.echo(f"wrote {path}", err=True)
    view = stability_view(table)
    undecided = f"; {view.undecided}" if view.undecided else ""
    typer.echo(f"{len(view.runs)} runs: {view.agreement} of gate verdicts decided alike in every "
               f"run; {table.decisiveness:.0%} of verdicts decided ({table.decided} of "
               f"{table.verdicts}{undecided}); {view.never_decided} never decided; "
               f"{view.flips} moved between passed and failed; "
               f"{len(view.unstable_rows)} row state(s) changed")  # fmt: skip
    if any(view.resumed):
        typer.echo(f"  runs: {view.named_runs}")
    for line in view.lines:
        if line.finding:
            typer.echo(f"  {line.gate} on {line.row}: {' '.join(line.verdicts)} ({line.finding})")
    for row, states in view.unstable_rows:
        typer.echo(f"  row {row}: {' → '.join(states)}")
    return bool(view.flips or view.unstable_rows)
