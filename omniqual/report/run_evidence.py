"""``RunEvidence``: everything a run evidence report is drawn from (domain records and the
plain facts the command that writes the report passes in), the renderer's whole input."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from omniqual.domain.matrix import CompiledMatrix
from omniqual.domain.recommendation import Recommendation
from omniqual.domain.result import GateResult
from omniqual.domain.run import RunSummary
from omniqual.domain.skill_rules import RuleCatalogue
from omniqual.domain.verdict_stability import StabilityTable
from omniqual.report.campaign_scope_view import CampaignScope
from omniqual.report.links import EvidenceLinks
from omniqual.report.support_claims_view import SupportClaimsView


@dataclass(frozen=True, slots=True)
class RunEvidence:
    """Everything a run evidence report is drawn from."""

    title: str
    matrix: CompiledMatrix
    runs: tuple[RunSummary, ...] = ()
    results: tuple[GateResult, ...] = ()
    """Results not inside ``runs`` (duplicates of run results are ignored)."""
    scope: str = ""
    """One line saying what this evidence covers (e.g. the task and hardware in scope)."""
    artifact_dirs: tuple[Path, ...] = ()
    """Content-addressed artifact directories (``<run>/artifacts``): the HTML report embeds the
    parity pictures it finds there, rehashed, and every figure links its run's journal."""
    report_dir: Path | None = None
    """Where the report is written: evidence links are relative to it (None: as given)."""
    gate_kinds: Mapping[str, str] = field(default_factory=dict)
    """Gate id → check kind for the matrix's gates, so an empty section names the gate that
    would fill it even when no result of that gate exists yet."""
    gate_tracks: Mapping[str, str] = field(default_factory=dict)
    """Gate id → the CI track its spec declares (the CI section prefers it to the kind's)."""
    full_report: str = ""
    """Where the complete report lives (e.g. ``report.html``), said when Markdown is trimmed."""
    support_claims: SupportClaimsView | None = None
    """The support table of the model under qualification (None: the section is left out)."""
    stability: StabilityTable | None = None
    """Verdicts of the same campaign run several times (``--repeat``): a section of its own."""
    recommendations: tuple[Recommendation, ...] = ()
    """``compile.recommend`` over this matrix and results, the headline objective first
    (empty: the "Recommended deployment" section is left out)."""
    campaign: CampaignScope | None = None
    """The rows the campaign behind the report qualified in full or only sampled, from its plan
    (None: the report is not a campaign's, and the "Campaign scope" section is left out)."""
    rules: RuleCatalogue | None = None
    """The production skill's rules (``gates/rules/``): the "Skill rules covered" block (None:
    the project has none, and the block is left out)."""

    def all_results(self) -> tuple[GateResult, ...]:
        seen: dict[str, GateResult] = {}
        for result in (*(r for run in self.runs for r in run.results), *self.results):
            seen.setdefault(result.result_id, result)
        return tuple(sorted(seen.values(), key=lambda r: (r.started_at, r.result_id)))

    def links(self) -> EvidenceLinks:
        return EvidenceLinks.from_artifact_dirs(self.artifact_dirs, self.report_dir)
