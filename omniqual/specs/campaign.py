"""Load a campaign file and resolve its relative paths."""

from dataclasses import dataclass
from pathlib import Path

from omniqual.domain.axes import Selector
from omniqual.domain.campaign import Campaign
from omniqual.specs.source import SpecError, SpecProblem, load_spec


@dataclass(frozen=True, slots=True)
class LoadedCampaign:
    campaign: Campaign
    path: Path
    selector: Selector
    parts: tuple[tuple[Selector, tuple[str, ...]], ...] = ()
    """The campaign's ``include`` parts, parsed: empty when it runs every wanted gate."""

    @property
    def matrix_path(self) -> Path:
        return (self.path.parent / self.campaign.matrix).resolve()

    @property
    def evidence_root(self) -> Path:
        return (self.path.parent / self.campaign.evidence).resolve()

    @property
    def full_campaign_path(self) -> Path | None:
        full = self.campaign.full_campaign
        return (self.path.parent / full).resolve() if full else None


def load_campaign(path: Path) -> LoadedCampaign:
    campaign, doc = load_spec(path, Campaign)
    problems: list[SpecProblem] = []
    selector = Selector.parse("")
    try:
        selector = Selector.parse(campaign.rows)
    except ValueError as exc:
        problems.append(doc.problem(("rows",), str(exc)))
    parts: list[tuple[Selector, tuple[str, ...]]] = []
    for index, part in enumerate(campaign.include):
        try:
            parts.append((Selector.parse(part.rows), part.gates))
        except ValueError as exc:
            problems.append(doc.problem(("include", index, "rows"), str(exc)))
    if campaign.full_campaign and not _names_a_file(path.parent / campaign.full_campaign):
        problems.append(doc.problem(("full_campaign",), "no such campaign file"))
    if problems:
        raise SpecError(problems)
    return LoadedCampaign(campaign, path.resolve(), selector, tuple(parts))


def _names_a_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # a name too long for the file system names no file
        return False
