"""Write what a campaign leaves behind: the compiled matrix (JSON) and the rendered reports."""

from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from omniqual.cli.matrix import default_features, write_matrix_pages
from omniqual.compile.recommend import recommend_matrix
from omniqual.domain.matrix import CompiledMatrix
from omniqual.domain.recommendation import Recommendation
from omniqual.domain.result import GateResult
from omniqual.domain.run import RunSummary
from omniqual.domain.skill_rules import RuleCatalogue
from omniqual.domain.verdict_stability import StabilityTable
from omniqual.engine.matrix_service import (
    ProjectMatrix,
    compile_from_dirs,
    load_project_matrix,
    write_json,
)
from omniqual.engine.run.campaign import CampaignOutcome
from omniqual.evidence.artifacts import ARTIFACTS_DIR
from omniqual.evidence.store import find_runs, read_run
from omniqual.report.campaign_scope_view import CampaignScope
from omniqual.report.claims_audit import audit_claims
from omniqual.report.claims_markdown import parse_claims
from omniqual.report.csv_export import write_csv
from omniqual.report.render import render_matrix, render_run_report
from omniqual.report.run_views import RunEvidence, run_report_view
from omniqual.report.support_claims import support_claims_view
from omniqual.report.support_claims_view import SupportClaimsView
from omniqual.specs.campaign import LoadedCampaign
from omniqual.specs.feature_tables import load_feature_tables
from omniqual.specs.rules import load_rule_catalogue, rules_dir


def run_evidence(
    matrix: Path, dirs: Sequence[Path], title: str, report_dir: Path | None = None,
    full_report: str = "", claims: Path | None = None,
) -> RunEvidence:  # fmt: skip
    """The report input for ``omniqual report``: a matrix compiled from ``dirs``, and their runs
    (with ``claims``, a hand-written support table audited against them)."""
    project = load_project_matrix(matrix)
    compiled = compile_from_dirs(project, dirs, None)
    runs = tuple(s for d in dirs for s in _summaries(d))
    seen = (r for run in runs for r in run.results)
    return RunEvidence(title=title or compiled.title, matrix=compiled, runs=runs,
                       artifact_dirs=artifact_dirs(dirs), report_dir=report_dir,
                       gate_kinds=gate_kinds(project), gate_tracks=gate_tracks(project),
                       full_report=full_report,
                       support_claims=support_claims(compiled, matrix, claims),
                       recommendations=recommendations(project, compiled, seen),
                       rules=skill_rules(project))  # fmt: skip


def skill_rules(project: ProjectMatrix) -> RuleCatalogue | None:
    """The production skill's rules (``gates/rules/``), traces checked against the project's
    gates; None where the project has none (the report leaves the block out)."""
    directory = rules_dir(project.project.gates)
    return load_rule_catalogue(directory, gate_kinds(project)) if directory.is_dir() else None


def campaign_scope(outcome: CampaignOutcome, loaded: LoadedCampaign) -> CampaignScope:
    """The rows ``outcome``'s plan qualified in full and those it only sampled."""
    return CampaignScope(
        campaign=loaded.campaign.name,
        in_full=tuple(r.row for r in outcome.reached if r.full),
        sampled=tuple((r.row, r.left_out) for r in outcome.reached if not r.full),
        full_campaign=loaded.campaign.full_campaign,
    )


def recommendations(project: ProjectMatrix, compiled: CompiledMatrix,
                    results: Iterable[GateResult]) -> tuple[Recommendation, ...]:  # fmt: skip
    """What ``omniqual recommend`` would say for each objective (latency first), over the
    compiled matrix's rows and these results: the report's "Recommended deployment"."""
    return recommend_matrix(project.matrix, project.current_gates(),
                            ((r, "") for r in results), compiled=compiled)  # fmt: skip


def support_claims(
    compiled: CompiledMatrix, matrix: Path, claims: Path | None = None
) -> SupportClaimsView | None:
    """The support table of the models under qualification, from the feature-table mapping
    beside the matrix (or the project's); None where the project has no mapping. With
    ``claims``, the hand-written table's contradictions come first."""
    mapping_path = default_features(matrix)
    if not mapping_path.is_file():
        if claims is not None:
            raise ValueError(f"--claims needs the feature-table mapping {mapping_path}")
        return None
    mapping = load_feature_tables(mapping_path)
    audit = None
    if claims is not None:
        audit = audit_claims(parse_claims(claims.read_text(encoding="utf-8")), compiled, mapping)
    return support_claims_view(compiled, mapping, audit)


def gate_kinds(project: ProjectMatrix) -> dict[str, str]:
    """Gate id → check kind: an empty report section names the gate that would fill it."""
    return {gate_id: gate.spec.kind for gate_id, gate in project.gates.items()}


def gate_tracks(project: ProjectMatrix) -> dict[str, str]:
    """Gate id → the CI track its spec declares (gates without one are left out)."""
    return {g: gate.spec.track.value for g, gate in project.gates.items() if gate.spec.track}


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


def write_reports(
    outcome: CampaignOutcome, loaded: LoadedCampaign, output: Path,
    stability: StabilityTable | None = None,
) -> list[Path]:  # fmt: skip
    """The compiled matrix and the reports of ``outcome`` (with ``stability``, the reruns'
    verdict-stability section)."""
    output.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    compiled_path = output / f"{outcome.compiled.name}.compiled.json"
    write_json(outcome.compiled, compiled_path)
    written.append(compiled_path)
    spec = loaded.campaign.report
    project = load_project_matrix(loaded.matrix_path)
    runs = _summaries(loaded.evidence_root)
    seen = (*(r for run in runs for r in run.results), *outcome.results)
    evidence = RunEvidence(
        title=spec.title or loaded.campaign.description or loaded.campaign.name,
        matrix=outcome.compiled,
        runs=runs,
        results=outcome.results,
        scope=loaded.campaign.description,
        artifact_dirs=artifact_dirs([loaded.evidence_root]),
        report_dir=output,
        gate_kinds=gate_kinds(project),
        gate_tracks=gate_tracks(project),
        full_report="report.html" if "html" in spec.formats else "",
        support_claims=support_claims(outcome.compiled, loaded.matrix_path),
        stability=stability,
        recommendations=recommendations(project, outcome.compiled, seen),
        campaign=campaign_scope(outcome, loaded),
        rules=skill_rules(project),
    )
    for fmt in spec.formats:
        matrix_path = output / f"matrix.{fmt}"
        if fmt == "html":  # a large matrix: a summary page and pages per model group (matrix/)
            written += write_matrix_pages(outcome.compiled, matrix_path)
        else:
            matrix_path.write_text(render_matrix(outcome.compiled, fmt), encoding="utf-8")
            written.append(matrix_path)
        if fmt != "json":
            report_path = output / f"report.{fmt}"
            report_path.write_text(render_run_report(evidence, fmt), encoding="utf-8")
            written.append(report_path)
    # Every table of the report as CSV beside it (report-tables/<section>-<title>.csv).
    tables = output / "report-tables"  # their evidence links are relative to this directory
    written += write_csv(run_report_view(replace(evidence, report_dir=tables)), tables)
    return written
