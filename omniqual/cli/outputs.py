"""Write what a campaign leaves behind: the compiled matrix (JSON) and the rendered reports."""

from collections.abc import Sequence
from pathlib import Path

from omniqual.domain.run import RunSummary
from omniqual.engine.artifacts import ARTIFACTS_DIR
from omniqual.engine.campaign import CampaignOutcome
from omniqual.engine.matrix_service import compile_from_dirs, load_project_matrix, write_json
from omniqual.engine.store import find_runs, read_run
from omniqual.report.render import render_matrix, render_run_report
from omniqual.report.run_views import RunEvidence
from omniqual.specs.campaign import LoadedCampaign


def run_evidence(matrix: Path, dirs: Sequence[Path], title: str) -> RunEvidence:
    """The report input for ``omniqual report``: a matrix compiled from ``dirs``, and their runs."""
    compiled = compile_from_dirs(load_project_matrix(matrix), dirs, None)
    runs = tuple(s for d in dirs for s in _summaries(d))
    return RunEvidence(title=title or compiled.title, matrix=compiled, runs=runs,
                       artifact_dirs=artifact_dirs(dirs))  # fmt: skip


def artifact_dirs(evidence_roots: Sequence[Path]) -> tuple[Path, ...]:
    """Every run's content-addressed artifact directory: the HTML report embeds pictures."""
    return tuple(run_dir / ARTIFACTS_DIR for run_dir in find_runs(list(evidence_roots)))


def _summaries(evidence_root: Path) -> tuple[RunSummary, ...]:
    summaries = []
    for run_dir in find_runs([evidence_root]):
        contents = read_run(run_dir)
        if not contents.starts:
            continue
        first = contents.starts[0]
        finished = contents.finished
        ends = [r.finished_at for r in contents.results]
        summaries.append(
            RunSummary(
                run_id=contents.run_id,
                started_at=first.at,
                finished_at=finished.at if finished else max(ends, default=first.at),
                status=finished.status if finished else "interrupted",
                command=first.command,
                environment=first.environment,
                results=contents.results,
            )
        )
    return tuple(sorted(summaries, key=lambda s: s.started_at))


def write_reports(outcome: CampaignOutcome, loaded: LoadedCampaign, output: Path) -> list[Path]:
    output.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    compiled_path = output / f"{outcome.compiled.name}.compiled.json"
    write_json(outcome.compiled, compiled_path)
    written.append(compiled_path)
    spec = loaded.campaign.report
    evidence = RunEvidence(
        title=spec.title or loaded.campaign.description or loaded.campaign.name,
        matrix=outcome.compiled,
        runs=_summaries(loaded.evidence_root),
        results=outcome.results,
        scope=loaded.campaign.description,
        artifact_dirs=artifact_dirs([loaded.evidence_root]),
    )
    for fmt in spec.formats:
        matrix_path = output / f"matrix.{fmt}"
        matrix_path.write_text(render_matrix(outcome.compiled, fmt), encoding="utf-8")
        written.append(matrix_path)
        if fmt != "json":
            report_path = output / f"report.{fmt}"
            report_path.write_text(render_run_report(evidence, fmt), encoding="utf-8")
            written.append(report_path)
    return written
