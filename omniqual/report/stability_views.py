"""The verdict-stability table as a report: per gate on a row, the verdict of every rerun, how
many agreed and how many decided (passed or failed); per row, the state of every rerun. Markdown,
HTML and JSON (``stability.*``)."""

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from omniqual.domain.verdict_stability import GateStability, StabilityTable
from omniqual.report.blocks import Bullets, KeyValues, Section, Table
from omniqual.report.evidence_blocks import RowLabels, row_label
from omniqual.report.templates import check_format, dump_json, render_template

STABILITY_SCHEMA_VERSION = 2
"""2: gates invalid in every run no longer count as agreeing; ``decided`` per line and in all,
``never_decided``, ``resumed`` and ``run_labels`` added."""


@dataclass(frozen=True, slots=True)
class StabilityLine:
    gate: str
    row: str
    verdicts: tuple[str, ...]
    """Per run: the outcome, or "—" where that run did not run the gate on the row."""
    agreed: str
    """"k/n": runs that gave the most common verdict, of those that ran it."""
    decided: str
    """"k/n": runs whose verdict decided (passed or failed), of those that ran it."""
    finding: str
    """"" when every run decided alike; else what moved (or that nothing was ever decided),
    with the reasons of the runs."""


@dataclass(frozen=True, slots=True)
class StabilityView:
    schema_version: int
    runs: tuple[str, ...]
    run_labels: tuple[str, ...]
    """Per run, its column heading: "Run 1", "Run 1 (resumed)"."""
    resumed: tuple[bool, ...]
    sessions: tuple[int, ...]
    agreement: str
    decided: str
    """Every verdict that decided, of all given: "10 of 12 (83%)"."""
    undecided: str
    """The verdicts that did not decide, by outcome: "2 invalid" ("" when none)."""
    never_decided: int
    flips: int
    unstable_rows: tuple[tuple[str, tuple[str, ...]], ...]
    """(row, per-run state) for each row whose state differed between runs."""
    stable_rows: int
    lines: tuple[StabilityLine, ...]

    @property
    def named_runs(self) -> str:
        """The run ids, each resumed one named as such."""
        return ", ".join(f"{run} (resumed: {n} sessions)" if n > 1 else run
                         for run, n in zip(self.runs, self.sessions, strict=True))  # fmt: skip


def _finding(gate: GateStability) -> str:
    if gate.pass_fail_flip:
        finding = "moved between passed and failed"
    elif gate.never_decided:
        seen = sorted({o.value for o in gate.outcomes if o is not None})
        finding = f"never decided: {' or '.join(seen)} in every run"
    elif not gate.stable:
        finding = "changed between runs"
    else:
        return ""
    why = [f"run {i + 1}: {r}" for i, r in enumerate(gate.reasons) if r]
    return "; ".join([finding, *why])


def _line(gate: GateStability) -> StabilityLine:
    return StabilityLine(
        gate=gate.gate_id,
        row=gate.row,
        verdicts=tuple(o.value if o is not None else "—" for o in gate.outcomes),
        agreed=f"{gate.agreeing}/{gate.ran}",
        decided=f"{gate.decided}/{gate.ran}",
        finding=_finding(gate),
    )


def stability_view(table: StabilityTable) -> StabilityView:
    lines = tuple(_line(gate) for gate in table.gates)
    unstable = tuple(
        (row.row, tuple(s.value if s is not None else "—" for s in row.states))
        for row in table.unstable_rows
    )
    sessions = table.sessions or tuple(1 for _ in table.run_ids)
    resumed = tuple(n > 1 for n in sessions)
    undecided = ", ".join(f"{n} {o.value}" for o, n in sorted(table.undecided_counts.items()))
    return StabilityView(
        schema_version=STABILITY_SCHEMA_VERSION,
        runs=table.run_ids,
        run_labels=tuple(f"Run {i + 1}{' (resumed)' if r else ''}" for i, r in enumerate(resumed)),
        resumed=resumed,
        sessions=sessions,
        agreement=f"{table.agreement:.0%}",
        decided=f"{table.decided} of {table.verdicts} ({table.decisiveness:.0%})",
        undecided=undecided,
        never_decided=len(table.never_decided),
        flips=len(table.flips),
        unstable_rows=unstable,
        stable_rows=len(table.rows) - len(unstable),
        lines=lines,
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
    rows whose state changed, and every gate verdict per run with how many runs agreed and
    decided."""
    view = stability_view(table)
    decided = view.decided + (f"; {view.undecided}" if view.undecided else "")
    summary = KeyValues("Summary", (
        ("runs", view.named_runs),
        ("gate verdicts decided alike in every run", view.agreement),
        ("verdicts that decided (passed or failed)", decided),
        ("gate verdicts never decided (no pass or fail in any run)", str(view.never_decided)),
        ("verdicts that moved between passed and failed", str(view.flips)),
        ("rows whose state changed", str(len(view.unstable_rows))),
    ))  # fmt: skip
    blocks: list[KeyValues | Table | Bullets] = [summary]
    if view.unstable_rows:
        blocks.append(Table("Rows whose state changed", ("Row", *view.run_labels),
                            tuple((row_label(labels, row), *states)
                                  for row, states in view.unstable_rows)))  # fmt: skip
    blocks.append(Table("Gate verdicts per run",
                        ("Gate", "Row", *view.run_labels, "Agreed", "Decided", "Finding"),
                        tuple((line.gate, row_label(labels, line.row), *line.verdicts,
                               line.agreed, line.decided, line.finding)
                              for line in view.lines)))  # fmt: skip
    return Section(number, STABILITY_TITLE, tuple(blocks))
