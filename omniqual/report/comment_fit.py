"""Fit the Markdown report into a GitHub PR comment (at most 65,536 characters).

The report is rendered in full first; while it is too long, the next of a fixed ladder of
degradations is applied to the view and it is rendered again. Every step is deterministic and
says what it did (``RunReportView.trimmed``), with where the full report is: a reviewer is never
left thinking a cut table was complete. The last resort cuts the text at a line boundary.
"""

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from omniqual.report.blocks import Block, Bullets, Gallery, Section, Table
from omniqual.report.recipe_block import RECIPE_PREFIX
from omniqual.report.run_views import RunReportView

COMMENT_LIMIT = 65_536
"""GitHub's maximum body of an issue or PR comment, in characters."""
STEP_SUMMARY_LIMIT = 1_048_576
"""GitHub's maximum size of one step's ``$GITHUB_STEP_SUMMARY`` (1 MiB)."""

Render = Callable[[RunReportView], str]


def _cut(block: Block, keep: int, where: str) -> Block:
    if isinstance(block, Table) and len(block.rows) > keep:
        note = f"{keep} of {len(block.rows)} rows shown; the full table is in {where}"
        return dataclasses.replace(block, rows=block.rows[:keep], links=block.links[:keep],
                                   note=note)  # fmt: skip
    if isinstance(block, Gallery) and len(block.rows) > keep:
        return dataclasses.replace(block, rows=block.rows[:keep])
    if isinstance(block, Bullets) and len(block.items) > keep:
        more = f"… {len(block.items) - keep} more in {where}"
        return Bullets(block.title, (*block.items[:keep], more))
    return block


@dataclass(frozen=True, slots=True)
class Level:
    """How much of the report one rung of the ladder keeps (None: everything)."""

    table_rows: int | None = None
    verdict_rows: int | None = None
    """The per-gate verdicts are what a reviewer reads first: cut last and least."""
    matrix_table: bool = True
    recipes: int | None = None
    coverage_lines: int | None = None
    blocks: int | None = None
    """Blocks kept per section (the rest are named as left out)."""
    contents: bool = True
    whole_below: int = 20
    """Tables of at most this many rows stay whole (the CI tracks, the limitations): cutting
    them saves little and loses a summary."""
    findings: int | None = None
    """Findings kept (the rest counted): they are the first screen, cut only near the end."""


LADDER = (
    Level(table_rows=50),
    Level(table_rows=50, matrix_table=False),
    Level(table_rows=20, matrix_table=False, recipes=20),
    Level(table_rows=8, matrix_table=False, recipes=5),
    Level(table_rows=8, verdict_rows=100, matrix_table=False, recipes=5, coverage_lines=60,
          findings=150),
    Level(3, 100, matrix_table=False, recipes=3, coverage_lines=60, whole_below=8, findings=150),
    Level(3, 100, matrix_table=False, recipes=3, coverage_lines=60, blocks=6, whole_below=8,
          findings=100),
    Level(3, 40, matrix_table=False, recipes=1, coverage_lines=20, blocks=3, whole_below=8,
          findings=100),
    Level(3, 40, matrix_table=False, recipes=1, coverage_lines=20, blocks=3, whole_below=0,
          findings=60),
    Level(3, 20, matrix_table=False, recipes=0, coverage_lines=20, contents=False, findings=40),
)  # fmt: skip
"""Mildest first: most reports lose only the tail of their longest tables. Each rung is applied
to the full view, so a note always counts against the full table."""


def _recipe_label(block: Block) -> str | None:
    if not block.title.startswith(RECIPE_PREFIX):
        return None
    return block.title[len(RECIPE_PREFIX) :].split(":", 1)[0]


def _keep_recipes(blocks: tuple[Block, ...], keep: int, seen: list[str]) -> tuple[Block, ...]:
    kept = []
    for b in blocks:
        label = _recipe_label(b)
        if label is not None:
            if label not in seen:
                seen.append(label)
            if seen.index(label) >= keep:
                continue
        kept.append(b)
    return tuple(kept)


def _section(s: Section, level: Level, where: str, seen: list[str]) -> Section:
    if not level.contents:
        note = s.empty_note if s.empty else f"content left out to fit; see {where}"
        return dataclasses.replace(s, blocks=(), empty_note=note)
    blocks = s.blocks
    if level.recipes is not None:
        blocks = _keep_recipes(blocks, level.recipes, seen)
    if level.table_rows is not None:
        blocks = tuple(
            b if isinstance(b, Table) and len(b.rows) <= level.whole_below
            else _cut(b, level.table_rows, where)
            for b in blocks
        )  # fmt: skip
    if level.blocks is not None and len(blocks) > level.blocks:
        left = blocks[level.blocks :]
        named = ", ".join(b.title for b in left[:5]) + (", …" if len(left) > 5 else "")
        gone = f"{len(left)} more block(s) of this section ({named}): see {where}"
        blocks = (*blocks[: level.blocks], Bullets("Left out to fit a PR comment", (gone,)))
    return dataclasses.replace(s, blocks=blocks)


def degrade(view: RunReportView, level: Level, where: str) -> RunReportView:
    """``view`` cut to ``level``, with ``trimmed`` saying what went and where it is."""
    seen: list[str] = []
    sections = tuple(_section(s, level, where, seen) for s in view.sections)
    notes = []
    verdicts = view.verdicts
    if level.table_rows is not None:
        whole = f", tables of up to {level.whole_below} rows whole" if level.whole_below else ""
        notes.append(f"tables cut to their first {level.table_rows} rows{whole} "
                     f"(full tables: {where})")  # fmt: skip
    if level.verdict_rows is not None and len(verdicts.rows) > level.verdict_rows:
        notes.append(f"per-gate verdicts cut to {level.verdict_rows} of {len(verdicts.rows)}")
        cut = _cut(verdicts, level.verdict_rows, where)
        assert isinstance(cut, Table)
        verdicts = cut
    verdict_reasons = view.verdict_reasons
    if level.table_rows is not None and len(verdict_reasons.rows) > level.whole_below:
        cut = _cut(verdict_reasons, level.table_rows, where)
        assert isinstance(cut, Table)
        verdict_reasons = cut
    findings = view.findings
    if level.findings is not None and len(findings) > level.findings:
        notes.append(f"findings cut to the first {level.findings} of {len(findings)} ({where})")
        findings = findings[: level.findings]
    if not level.matrix_table:
        notes.append(f"the matrix table left out; the coverage map shows every row ({where})")
    if level.blocks is not None:
        notes.append(f"at most {level.blocks} blocks per section ({where})")
    if level.recipes is not None and level.contents:
        dropped = max(len(seen) - level.recipes, 0)
        notes.append(f"hardware recipes kept for {min(level.recipes, len(seen))} of {len(seen)} "
                     f"rows ({dropped} more in {where})")  # fmt: skip
    coverage = view.coverage
    if level.coverage_lines is not None and len(coverage.lines) > level.coverage_lines:
        notes.append(f"coverage map cut to its first {level.coverage_lines} of "
                     f"{len(coverage.lines)} lines ({where})")  # fmt: skip
        coverage = dataclasses.replace(coverage, lines=coverage.lines[: level.coverage_lines])
    if not level.contents:
        notes.append(f"section contents left out ({where})")
    return dataclasses.replace(
        view, sections=sections, verdicts=verdicts, verdict_reasons=verdict_reasons,
        findings=findings, findings_left_out=len(view.findings) - len(findings), coverage=coverage,
        matrix_table=level.matrix_table, trimmed=tuple(notes),
    )  # fmt: skip


def fit(view: RunReportView, render: Render, limit: int = COMMENT_LIMIT) -> str:
    """``render(view)``, degraded step by step until it is at most ``limit`` characters."""
    where = view.full_report or "the HTML report and the CSV export"
    text = render(view)
    for level in LADDER:
        if len(text) <= limit:
            return text
        text = render(degrade(view, level, where))
    if len(text) <= limit:
        return text
    tail = f"\n\n> [!WARNING]\n> Cut at {limit} characters; the full report is {where}.\n"
    cut = text[: limit - len(tail)]
    return cut[: cut.rfind("\n")] + tail
