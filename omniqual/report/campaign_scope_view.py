"""The first screen's "Campaign scope", drawn after the findings: which rows the campaign behind
the report qualified in full (it ran every gate that can decide the row) and which it only
sampled (it ran some and left the rest to another campaign), with the gates left out.

The campaign's plan decides it (``omniqual.engine.run.campaign_scope.rows_reached``); the command
that writes the report passes it in as a :class:`CampaignScope`. A report of recorded runs
without a campaign (``omniqual report``) has none and leaves the section out.
"""

from dataclasses import dataclass

from omniqual.report.views import MatrixView


@dataclass(frozen=True, slots=True)
class CampaignScope:
    """What a campaign ran of each row it touched, from its plan (row keys)."""

    campaign: str
    in_full: tuple[str, ...]
    sampled: tuple[tuple[str, tuple[str, ...]], ...]
    """(row key, the gates deciding it that the campaign left out)."""
    full_campaign: str = ""
    """The campaign that runs what this one leaves out, as the campaign file names it."""


@dataclass(frozen=True, slots=True)
class ScopedRow:
    label: str
    anchor: str
    left_out: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CampaignScopeView:
    campaign: str
    full_campaign: str
    in_full: tuple[ScopedRow, ...]
    sampled: tuple[ScopedRow, ...]


def campaign_scope_view(scope: CampaignScope, matrix: MatrixView) -> CampaignScopeView:
    """``scope`` over the report's rows, in their order; a row outside the matrix the report
    covers is left out, as its results are."""
    drawn = [row for group in matrix.groups for row in group.rows]
    left_out = dict(scope.sampled)

    def rows(keys: tuple[str, ...]) -> tuple[ScopedRow, ...]:
        wanted = set(keys)
        return tuple(ScopedRow(f"#{row.number}", row.anchor, left_out.get(row.key, ()))
                     for row in drawn if row.key in wanted)  # fmt: skip

    return CampaignScopeView(
        campaign=scope.campaign,
        full_campaign=scope.full_campaign,
        in_full=rows(scope.in_full),
        sampled=rows(tuple(left_out)),
    )
