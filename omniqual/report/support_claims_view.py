"""The place of the "Support claims" section in a report: what the report needs from whatever
builds the support table of the model under qualification, and nothing more.

The report shows it right after the findings, the audit's contradictions first. Absent (None)
the section is left out altogether. The builder owns what goes in: it must hold no prompts,
secrets or encoded payloads, like everything else in a report.
"""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SupportClaimsView:
    markdown_table: str
    """The support table as a GitHub Markdown table, inserted into the Markdown report as is."""
    html_headers: tuple[str, ...]
    html_rows: tuple[tuple[str, ...], ...]
    """The same table as plain-text cells for the HTML report (escaped there)."""
    contradictions: tuple[str, ...] = ()
    """What an audit of the claims against the evidence found contradicted, one line each;
    shown before the table. Empty: no audit, or nothing contradicted."""

    def __post_init__(self) -> None:
        for row in self.html_rows:
            if len(row) != len(self.html_headers):
                raise ValueError(f"support claims row {row!r} does not match the headers")
