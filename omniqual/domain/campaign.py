"""Campaigns: a plan of rows x gates against launch recipes, with where results and reports go."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class ReportSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    formats: tuple[Literal["md", "html", "json"], ...] = ("md", "html")
    title: str = ""


class CampaignPart(BaseModel):
    """One part of a campaign that runs only some of its rows' gates: rows matching ``rows``
    run ``gates`` (all the gates each row wants when empty)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rows: str = Field(description="Row selector (axis=value|value,...).")
    gates: tuple[str, ...] = Field(default=(), description="These gates only (default: all).")


class Campaign(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = 1
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    description: str = ""
    matrix: str = Field(description="Matrix definition, relative to this file.")
    rows: str = Field(default="", description="Row selector; empty = every row.")
    gates: tuple[str, ...] = Field(default=(), description="Only these gates (default: all).")
    include: tuple[CampaignPart, ...] = Field(
        default=(),
        description="When given, only these (rows, gates) run; every other gate a selected row "
        "wants is left to another campaign and the row says so.",
    )
    full_campaign: str = Field(
        default="",
        description="The campaign, relative to this file, that runs what this one leaves out "
        "(named in the rows it leaves `not tested`).",
    )
    evidence: str = Field(
        default="../.omniqual/runs", description="Run root, relative to this file."
    )
    targets: dict[str, str] = Field(
        default_factory=dict, description="recipe id -> URL of an existing deployment to use."
    )
    report: ReportSpec = Field(default_factory=ReportSpec)
    seed: int = 0
    exit_policy: Literal["strict", "report"] = Field(
        default="strict",
        description="strict: exit 1 when a gate failed or was invalid; report: exit 0 once the "
        "evidence is recorded and the report rendered (findings are in the report).",
    )
