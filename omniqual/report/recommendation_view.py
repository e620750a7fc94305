"""The "Recommended deployment" section: the row to deploy, chosen from the evidence by
``omniqual.compile.recommend`` (the same selection as ``omniqual recommend``), drawn after the
findings and support claims and before the per-gate verdicts.

The first recommendation given is the headline (latency by default): its best row with the figure
and links to the results that made it eligible, the most memory-constrained eligible row, and
every row that is not eligible with why, one line each. The other objectives' winners follow in
one line each. A `limited` row is never shown without its limitation. Nothing eligible is said in
one line with the count of rows considered.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from omniqual.domain.outcomes import CellState
from omniqual.domain.recommendation import Candidate, Recommendation
from omniqual.domain.result import GateResult
from omniqual.report.evidence_blocks import RowLabels, row_label
from omniqual.report.links import EvidenceLinks
from omniqual.report.redact import safe_text

FOLD_AFTER = 5
"""More rows not eligible than this are folded (HTML ``<details>``)."""


@dataclass(frozen=True, slots=True)
class EvidenceLink:
    text: str
    href: str
    """Empty: the result's run is not among the report's evidence directories."""


@dataclass(frozen=True, slots=True)
class RecommendedRow:
    row: str
    """The row's label in this report (``#n``; the key of a row outside the matrix)."""
    recipe: str
    figure: str
    """e.g. ``latency 0.138 s (perf:latency_mean)``."""
    evidence: tuple[EvidenceLink, ...]
    limitation: str | None = None
    """Set for a `limited` row: what bounds it, shown beside the recommendation."""


@dataclass(frozen=True, slots=True)
class OtherObjective:
    objective: str
    best: str
    """The winning row and its figure, or why there is none."""


@dataclass(frozen=True, slots=True)
class RecommendationView:
    objective: str
    considered: int
    eligible: int
    best: RecommendedRow | None
    memory_constrained: RecommendedRow | None
    not_eligible: tuple[str, ...]
    """One line per row: its label and every reason."""
    others: tuple[OtherObjective, ...] = ()

    @property
    def folded(self) -> bool:
        return len(self.not_eligible) > FOLD_AFTER


def _label(labels: RowLabels, key: str) -> str:
    return safe_text(row_label(labels, key))


def _figure(candidate: Candidate, what: str) -> str:
    f = candidate.figure
    return f"{what} {f.value:.4g} {f.unit} ({safe_text(f.source)})"


def _limitation(candidate: Candidate) -> str | None:
    if candidate.state is not CellState.LIMITED:
        return None
    return safe_text(candidate.limitation or "limitation not recorded")


def _other(candidate: Candidate, what: str, labels: RowLabels) -> str:
    limited = _limitation(candidate)
    bound = f" (limited: {limited})" if limited is not None else ""
    return f"{_label(labels, candidate.row)}: {_figure(candidate, what)}{bound}"


def _row(candidate: Candidate, what: str, labels: RowLabels,
         results: Mapping[str, GateResult], links: EvidenceLinks) -> RecommendedRow:  # fmt: skip
    evidence = []
    for ref in dict.fromkeys(candidate.evidence):
        found = results.get(ref)
        if found is None:  # a link given by the caller, shown as is
            evidence.append(EvidenceLink(safe_text(ref), ""))
        else:
            href = links.result(found.run_id, found.result_id)
            evidence.append(EvidenceLink(f"{found.gate_id} {found.outcome.value}", href))
    return RecommendedRow(_label(labels, candidate.row), safe_text(candidate.recipe or "(none)"),
                          _figure(candidate, what), tuple(evidence),
                          _limitation(candidate))  # fmt: skip


def recommendation_view(recommendations: Sequence[Recommendation], labels: RowLabels,
                        results: Sequence[GateResult], links: EvidenceLinks,
                        ) -> RecommendationView | None:  # fmt: skip
    """The section's view; None (the section left out) when no recommendation is given."""
    if not recommendations:
        return None
    head, *rest = recommendations
    by_id = {r.result_id: r for r in results}
    goal = head.objective.value
    others = tuple(
        OtherObjective(r.objective.value,
                       _other(r.best, r.objective.value, labels)
                       if r.best is not None
                       else f"none eligible of {len(r.ranked) + len(r.not_eligible)} rows")
        for r in rest
    )  # fmt: skip
    return RecommendationView(
        objective=goal,
        considered=len(head.ranked) + len(head.not_eligible),
        eligible=len(head.ranked),
        best=_row(head.best, goal, labels, by_id, links) if head.best else None,
        memory_constrained=(_row(head.memory_constrained, "memory", labels, by_id, links)
                            if head.memory_constrained else None),
        not_eligible=tuple(f"{_label(labels, n.row)}: {safe_text('; '.join(n.why))}"
                           for n in head.not_eligible),
        others=others,
    )  # fmt: skip
