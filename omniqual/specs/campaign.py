"""Load a campaign file and resolve its relative paths."""

from dataclasses import dataclass
from pathlib import Path

from omniqual.domain.axes import Selector
from omniqual.domain.campaign import Campaign
from omniqual.specs.source import SpecError, load_spec


@dataclass(frozen=True, slots=True)
class LoadedCampaign:
    campaign: Campaign
    path: Path
    selector: Selector

    @property
    def matrix_path(self) -> Path:
        return (self.path.parent / self.campaign.matrix).resolve()

    @property
    def evidence_root(self) -> Path:
        return (self.path.parent / self.campaign.evidence).resolve()


def load_campaign(path: Path) -> LoadedCampaign:
    campaign, doc = load_spec(path, Campaign)
    try:
        selector = Selector.parse(campaign.rows)
    except ValueError as exc:
        raise SpecError([doc.problem(("rows",), str(exc))]) from None
    return LoadedCampaign(campaign, path.resolve(), selector)
