"""The run evidence report: a matrix plus run records, laid out as the seed's PR evidence
checklist (ten sections), for the rows of the matrix and only those. Before the sections comes
what a reviewer decides on: the states and coverage map, the findings (``findings``), the
support claims when given (``support_claims_view``), the recommended deployment when given
(``recommendation_view``), what the campaign qualified in full or only sampled and the skill's
rules this evidence decided when given (``campaign_scope_view``, ``skill_rules_view``), then the
per-gate verdicts.

``RunEvidence`` (``run_evidence``) is the renderer's whole input; ``run_report_view`` turns it
into sections of plain strings. Results are routed to checklist sections by check kind; a kind
the routing table does not know lands in a trailing "other gate evidence" section, never nowhere.
A section without evidence says so and names the gate (or check kind) that would fill it.
"""

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from omniqual.domain.matrix import CompiledMatrix
from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.domain.result import GateResult
from omniqual.report.abort_views import abort_blocks
from omniqual.report.blocks import (
    NO_EVIDENCE,
    Block,
    Bullets,
    Gallery,
    KeyValues,
    Picture,
    Section,
    Table,
    non_empty,
)
from omniqual.report.campaign_scope_view import CampaignScopeView, campaign_scope_view
from omniqual.report.checklist import (
    SECTION_BY_KIND,
    TRACK_BY_SECTION,
    GateDirectory,
    ci_tracks_table,
    fill_note,
    gate_status,
    section_results,
    verdict_reasons,
    verdict_table,
)
from omniqual.report.contract_views import contract_limits_table
from omniqual.report.coverage_map import CoverageMap, coverage_map
from omniqual.report.evidence_blocks import (
    RowLabels,
    artifact_table,
    case_table,
    environment_blocks,
    measurement_table,
    parameter_table,
    result_table,
    revision_table,
    row_label,
    serve_command_table,
)
from omniqual.report.findings import Finding, run_findings
from omniqual.report.isolation_views import isolation_blocks
from omniqual.report.links import EvidenceLinks
from omniqual.report.parity_views import parity_blocks
from omniqual.report.recipe_block import recipe_blocks
from omniqual.report.recommendation_view import RecommendationView, recommendation_view
from omniqual.report.redact import (
    report_paths,
    safe_command,
    safe_text,
    view_without_local_paths,
)
from omniqual.report.run_evidence import RunEvidence
from omniqual.report.skill_rules_view import SkillRulesView, skill_rules_view
from omniqual.report.soak_views import soak_blocks, soak_tables
from omniqual.report.stability_views import stability_section
from omniqual.report.stage_views import STAGE_FILL, stage_blocks
from omniqual.report.support_claims_view import SupportClaimsView
from omniqual.report.sweep_views import sweep_blocks
from omniqual.report.templates import is_figure
from omniqual.report.timing_views import run_timing_blocks
from omniqual.report.views import MatrixView, matrix_view

__all__ = ["SECTION_BY_KIND", "RunEvidence", "RunReportView", "run_report_view"]


@dataclass(frozen=True, slots=True)
class RunReportView:
    title: str
    scope: str
    runs: tuple[str, ...]
    outcome_counts: tuple[tuple[str, int], ...]
    gates_closed: tuple[str, ...]
    """Gates whose latest result on every row they ran on passed."""
    gates_open: tuple[str, ...]
    """Gates required by the matrix or run here whose latest result somewhere did not pass."""
    out_of_scope: int
    """Results on rows outside the matrix: left out (the report covers the scoped rows only)."""
    findings: tuple[Finding, ...]
    """Every failed, invalid or errored gate and every limitation: the first screen's list."""
    verdicts: Table
    verdict_reasons: Table
    """The reasons of the verdicts whose cell only counts them, in full (folded when drawn)."""
    coverage: CoverageMap
    matrix: MatrixView
    sections: tuple[Section, ...]
    full_report: str = ""
    trimmed: tuple[str, ...] = ()
    """What was folded or cut to fit a PR comment (empty: nothing)."""
    matrix_table: bool = True
    """The scoped matrix is drawn as a table too (a PR comment may keep only the coverage map)."""
    data_tables: tuple[tuple[int, Table], ...] = ()
    """(section, table) behind the plots: too long to print, exported as CSV only."""
    support_claims: SupportClaimsView | None = None
    """Drawn after the findings when given; None leaves the section out."""
    recommendation: RecommendationView | None = None
    """Drawn after the support claims, before the verdicts; None leaves the section out."""
    findings_left_out: int = 0
    """Findings cut to fit a PR comment (they follow the listed ones in the full report)."""
    campaign: CampaignScopeView | None = None
    """Drawn after the coverage map; None leaves the section out."""
    skill_rules: SkillRulesView | None = None
    """Drawn after the recommended deployment; None leaves the block out."""


@dataclass(frozen=True, slots=True)
class _Context:
    results: tuple[GateResult, ...]
    labels: RowLabels
    links: EvidenceLinks
    fill: Mapping[str, str]
    """Section → what it says when empty (the gate that would fill it)."""

    def of(self, section: str) -> tuple[GateResult, ...]:
        return section_results(self.results, section)

    def evidence(self, section: str) -> tuple[Block, ...]:
        """The usual content for a checklist section: its results, cases and measurements."""
        results = self.of(section)
        return non_empty(
            result_table("Gate results", results, self.labels, self.links),
            case_table("Cases", results, self.labels, self.links),
            measurement_table("Measurements", results, self.labels, self.links),
        )


def _contract(ctx: _Context) -> Section:
    contract = ctx.of("contract")
    deviations: dict[str, list[str]] = {}  # a deviation several rows reproduce: one line
    for r in contract:
        for c in r.cases:
            if c.deviation:
                said = (
                    f"{c.id} ({c.endpoint}): expected {c.expected_status}, observed "
                    f"{c.observed_status}" + (f" ({safe_text(c.note)})" if c.note else "")
                )
                deviations.setdefault(said, []).append(row_label(ctx.labels, r.row))
    shown = tuple(f"{said}: row{'s' * (len(set(rows)) > 1)} {', '.join(dict.fromkeys(rows))}"
                  for said, rows in deviations.items())  # fmt: skip
    blocks = non_empty(
        revision_table(ctx.results),
        contract_limits_table(contract, ctx.labels, ctx.links),
        Bullets("Declared deviations from the official contract", shown),
        *ctx.evidence("contract"),
    )
    return Section(1, "Official revisions and API/limit matrix", blocks,
                   empty_note=ctx.fill["contract"])  # fmt: skip


def _implementation(matrix: CompiledMatrix, ctx: _Context) -> Section:
    notes = tuple(
        f"{row_label(ctx.labels, row.key)}: {safe_text(row.note, limit=400)}"
        for row in matrix.rows
        if row.note
    )
    blocks = non_empty(parameter_table(ctx.results, ctx.labels, ctx.links),
                       Bullets("Row notes", notes))  # fmt: skip
    note = f"{ctx.fill['any']}: its requested and effective parameters are listed here"
    return Section(3, "Implementation notes", blocks, empty_note=note)


AUTHORITATIVE_RUNS = ("Runs (each run's command is the authoritative one: it reproduces every "
                      "result of its run; the gate commands below are what it ran)")


def _reproduction(evidence: RunEvidence, ctx: _Context) -> Section:
    runs = evidence.runs
    run_rows = tuple(
        (run.run_id, run.status, run.started_at.isoformat(), run.finished_at.isoformat(),
         safe_command(run.command))
        for run in runs
    )  # fmt: skip
    with_command = tuple(r for r in ctx.results if r.command)
    commands = tuple(
        (r.gate_id, row_label(ctx.labels, r.row), safe_text(r.target), safe_command(r.command))
        for r in with_command
    )
    environments = {run.run_id: run.environment for run in runs}
    recipes: list[Block] = []
    for row in evidence.matrix.rows:
        on_row = tuple(r for r in ctx.results if r.row == row.key)
        recipes += recipe_blocks(row, row_label(ctx.labels, row.key), on_row, environments,
                                 ctx.links)  # fmt: skip
    blocks = non_empty(
        *recipes,
        serve_command_table(ctx.results),
        Table(AUTHORITATIVE_RUNS, ("Run", "Status", "Started", "Finished", "Command"), run_rows),
        *run_timing_blocks(runs, evidence.artifact_dirs),
        *environment_blocks(runs),
        Table("Gate commands", ("Gate", "Row", "Target", "Command"), commands,
              links=tuple(ctx.links.result(r.run_id, r.result_id) for r in with_command)),
    )  # fmt: skip
    title = "Exact environment, deploy/serve and task curls (hardware recipe per row)"
    return Section(4, title, blocks, empty_note=ctx.fill["any"])


def _limitations(view: MatrixView) -> Section:
    rows = tuple(
        (
            f"#{row.number}",
            "; ".join(
                [group.title] * (group.title != "all rows")
                + [f"{c}={v}" for c, v in zip(group.columns, row.cells, strict=True)]
            ),
            row.state,
            "; ".join(row.reasons),
        )
        for group in view.groups
        for row in group.rows
        if row.state != CellState.VALIDATED.value
    )
    note = "none: every row in the matrix is validated" if view.total else "no rows in the matrix"
    table = Table("Rows that are not validated", ("#", "Row", "State", "Reasons"), rows)
    title = "Limitations / TODO (not implied support)"
    return Section(10, title, non_empty(table), empty_note=note)


# Figures drawn by other view modules go into their section here, each a function of the
# section's results and the row labels returning blocks (sweep_views draws the offload
# frontier; soak plots, stage accounting and abort cleanup figures join sections 6, 7 and 8).
def _accuracy_figures(ctx: _Context) -> tuple[Block, ...]:
    blocks = _per_result(lambda rs: parity_blocks(rs, ctx.labels), ctx.of("accuracy"), ctx)
    return _linked_pictures(blocks, ctx)


def _per_result(
    draw: Callable[[tuple[GateResult, ...]], tuple[Block, ...]],
    results: tuple[GateResult, ...],
    ctx: _Context,
) -> tuple[Block, ...]:
    """``draw`` one result at a time, so the figures of each summary it draws (a key/value
    list of numbers) link that result's record."""
    blocks: list[Block] = []
    for r in results:
        href = ctx.links.result(r.run_id, r.result_id)
        for b in draw((r,)):
            if isinstance(b, KeyValues) and href and not b.links:
                b = replace(b, links=tuple(href if is_figure(v) else "" for _, v in b.items))
            blocks.append(b)
    return tuple(blocks)


def _linked_pictures(blocks: tuple[Block, ...], ctx: _Context) -> tuple[Block, ...]:
    """Gallery pictures linked to their artifact files (Markdown links them, never inlines)."""
    runs = {a.sha256: r.run_id for r in ctx.results for a in r.artifacts}

    def link(p: Picture) -> Picture:
        if p.sha256 is None or p.sha256 not in runs:
            return p
        return replace(p, link=ctx.links.artifact(runs[p.sha256], p.sha256) or None)

    return tuple(
        replace(
            b, rows=tuple(replace(row, pictures=tuple(map(link, row.pictures))) for row in b.rows)
        )
        if isinstance(b, Gallery)
        else b
        for b in blocks
    )


def _performance_figures(ctx: _Context) -> tuple[Block, ...]:
    return (*_per_result(lambda rs: sweep_blocks(rs, ctx.labels), ctx.of("performance"), ctx),
            *soak_blocks(ctx.of("performance"), ctx.labels, ctx.links))  # fmt: skip


def _output_figures(ctx: _Context) -> tuple[Block, ...]:
    # Stage accounting is recorded by load gates (soak) of any section. Without any record it
    # says what would fill it: here beside output evidence, else in the section's empty note.
    return (*isolation_blocks(ctx.of("output"), ctx.labels, ctx.links),
            *stage_blocks(ctx.results, ctx.labels, ctx.links,
                          say_missing=bool(ctx.of("output"))))  # fmt: skip


def _fault_figures(ctx: _Context) -> tuple[Block, ...]:
    return abort_blocks(ctx.of("fault"), ctx.labels, ctx.links)


def run_report_view(evidence: RunEvidence) -> RunReportView:
    keys = {row.key for row in evidence.matrix.rows}
    everything = evidence.all_results()
    results = tuple(r for r in everything if r.row in keys)
    matrix = matrix_view(evidence.matrix)
    labels = {row.key: f"#{row.number}" for group in matrix.groups for row in group.rows}
    gates = GateDirectory.of(evidence.matrix, results, evidence.gate_kinds, evidence.gate_tracks)
    fill = {s: fill_note(s, gates, labels) for s in (*TRACK_BY_SECTION, "other")}
    fill["any"] = f"{NO_EVIDENCE}: run any gate of this matrix on these rows (`omniqual run`)"
    ctx = _Context(results, labels, evidence.links(), fill)
    counts = Counter(r.outcome for r in results)
    closed, open_ = gate_status(results, evidence.matrix)
    sections = [
        _contract(ctx),
        Section(2, "Scoped feature compatibility matrix (four states only)", includes_matrix=True),
        _implementation(evidence.matrix, ctx),
        _reproduction(evidence, ctx),
        Section(5, "Fixed accuracy inputs and artifacts",
                non_empty(artifact_table(results, ctx.links), *_accuracy_figures(ctx),
                          *ctx.evidence("accuracy")),
                empty_note=fill["accuracy"]),
        Section(6, "Raw performance runs and memory traces",
                non_empty(*_performance_figures(ctx), *ctx.evidence("performance")),
                empty_note=fill["performance"]),
        Section(7, "Output contract and stage accounting",
                non_empty(*_output_figures(ctx), *ctx.evidence("output")),
                empty_note=f"{fill['output']}; {STAGE_FILL}"),
        Section(8, "Abort / disconnect / fault results and cleanup",
                non_empty(*_fault_figures(ctx), *ctx.evidence("fault")),
                empty_note=fill["fault"]),
        Section(9, "CI tracks (Function / Accuracy / Performance / Reliability)",
                non_empty(ci_tracks_table(results, gates, labels)),
                empty_note=fill["any"]),
        _limitations(matrix),
    ]  # fmt: skip
    other = ctx.evidence("other")
    if other:
        sections.append(Section(11, "Other gate evidence (check kinds outside the checklist)",
                                other))  # fmt: skip
    if evidence.stability is not None:
        sections.append(stability_section(evidence.stability, labels, 12))
    view = RunReportView(
        title=evidence.title,
        scope=evidence.scope,
        runs=tuple(run.run_id for run in evidence.runs),
        outcome_counts=tuple((o.value, counts.get(o, 0)) for o in GateOutcome),
        gates_closed=closed,
        gates_open=open_,
        out_of_scope=len(everything) - len(results),
        findings=run_findings(results, evidence.matrix, labels, ctx.links),
        verdicts=verdict_table(results, labels, ctx.links),
        verdict_reasons=verdict_reasons(results, labels, ctx.links),
        coverage=coverage_map(evidence.matrix, matrix),
        matrix=matrix,
        sections=tuple(sections),
        full_report=evidence.full_report,
        data_tables=tuple((6, t) for t in soak_tables(ctx.of("performance"), labels)),
        support_claims=evidence.support_claims,
        recommendation=recommendation_view(evidence.recommendations, labels, results, ctx.links),
        campaign=(campaign_scope_view(evidence.campaign, matrix)
                  if evidence.campaign is not None else None),
        skill_rules=(skill_rules_view(evidence.rules, results, labels, evidence.full_report)
                     if evidence.rules is not None else None),
    )  # fmt: skip
    # Last, over every string of the view: each format drawn from it hides the same local paths.
    return view_without_local_paths(view, report_paths(r.provenance for r in everything))
