"""The verdict-stability table as a report: per gate on a row, the verdict of every rerun and
how many agreed; per row, the state of every rerun. Markdown, HTML and JSON (``stability.*``)."""

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from omniqual.domain.verdict_stability import StabilityTable
from omniqual.report.blocks import Bullets, KeyValues, Section, Table
from omniqual.report.evidence_blocks import RowLabels, row_label
from omniqual.report.templates import check_format, dump_json, render_template

STABILITY_SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True)
class StabilityLine:
    gate: str
    row: str
    verdicts: tuple[str, ...]
    """Per run: the outcome, or "—" where that run did not run the gate on the row."""
    agreed: str
    """"k/n": runs that gave the most common verdict, of those that ran it."""
    finding: str
    """"" when every run agreed; else what moved, with the reasons of the runs that differ."""


@dataclass(frozen=True, slots=True)
class StabilityView:
    schema_version: int
    runs: tuple[str, ...]
    agreement: str
    flips: int
    unstable_rows: tuple[tuple[str, tuple[str, ...]], ...]
    """(row, per-run state) for each row whose state differed between runs."""
    stable_rows: int
    lines: tuple[StabilityLine, ...]


def stability_view(table: StabilityTable) -> StabilityView:
    lines = []
    for gate in table.gates:
        verdicts = tuple(o.value if o is not None else "—" for o in gate.outcomes)
        finding = ""
        if gate.pass_fail_flip:
            finding = "moved between passed and failed"
        elif not gate.stable:
            finding = "changed between runs"
        if finding:
            why = [f"run {i + 1}: {r}" for i, r in enumerate(gate.reasons) if r]
            finding = "; ".join([finding, *why])
        lines.append(StabilityLine(gate.gate_id, gate.row, verdicts,
                                   f"{gate.agreeing}/{gate.ran}", finding))  # fmt: skip
    unstable = tuple(
        (row.row, tuple(s.value if s is not None else "—" for s in row.states))
        for row in table.unstable_rows
    )
    return StabilityView(
        schema_version=STABILITY_SCHEMA_VERSION,
        runs=table.run_ids,
        agreement=f"{table.agreement:.0%}",
        flips=len(table.flips),
        unstable_rows=unstable,
        stable_rows=len(table.rows) - len(unstable),
        lines=tuple(lines),
    )


def render_stability(table: StabilityTable, fmt: str, templates_dir: Path | None = None) -> str:
    check_format(fmt, ("md", "html", "json"))
    view = stability_view(table)
    if fmt == "json":
        return dump_json(dataclasses.asdict(view))
    return render_template(f"stability.{fmt}.j2", templates_dir, view=view)


STABILITY_TITLE = "Verdict stability (reruns of the same build)"


def stability_section(table: StabilityTable, labels: RowLabels, number: int) -> Section:
    """The report's section for a campaign run more than once (``--repeat``): the summary, the
    rows whose state changed, and every gate verdict per run with how many runs agreed."""
    view = stability_view(table)
    runs = tuple(f"Run {i + 1}" for i in range(len(view.runs)))
    summary = KeyValues("Summary", (
        ("runs", ", ".join(view.runs)),
        ("gate verdicts the same in every run", view.agreement),
        ("verdicts that moved between passed and failed", str(view.flips)),
        ("rows whose state changed", str(len(view.unstable_rows))),
    ))  # fmt: skip
    blocks: list[KeyValues | Table | Bullets] = [summary]
    if view.unstable_rows:
        blocks.append(Table("Rows whose state changed", ("Row", *runs),
                            tuple((row_label(labels, row), *states)
                                  for row, states in view.unstable_rows)))  # fmt: skip
    blocks.append(Table("Gate verdicts per run", ("Gate", "Row", *runs, "Agreed", "What moved"),
                        tuple((line.gate, row_label(labels, line.row), *line.verdicts,
                               line.agreed, line.finding) for line in view.lines)))  # fmt: skip
    return Section(number, STABILITY_TITLE, tuple(blocks))
