"""The run report's "Skill rules covered" block: the production skill's rules (``gates/rules/``)
counted per group and status, how many of them this report's results decided on its rows, the
ids of those they did not, and (HTML only) every rule in a table: statement, status, what
decides it, what is missing or why nothing does, and what this report's results made of it.

Built from :func:`omniqual.report.rule_verdicts.rule_verdicts`, the evaluation ``omniqual rules``
prints. Plain strings and numbers only, so every format draws the same facts.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from omniqual.domain.result import GateResult
from omniqual.domain.skill_rules import (
    STATUS_ORDER,
    CompileRule,
    GateCase,
    RuleCatalogue,
    RuleStatus,
    SkillRule,
    coverage,
    totals,
)
from omniqual.report.rule_verdicts import RuleVerdicts, rule_verdicts

TABLE_ANCHOR = "skill-rules"
"""The HTML anchor of the full table; each rule's row is ``rule-<id>``."""
UNDECIDABLE = (RuleStatus.MISSING, RuleStatus.OUT_OF_SCOPE)


@dataclass(frozen=True, slots=True)
class GroupCount:
    group: str
    title: str
    total: int
    counts: tuple[int, ...]
    """One count per status, in ``SkillRulesView.statuses`` order."""


@dataclass(frozen=True, slots=True)
class RuleRef:
    id: str
    anchor: str


@dataclass(frozen=True, slots=True)
class RuleLine:
    """One rule of the full table."""

    id: str
    anchor: str
    statement: str
    status: str
    decided_by: str
    gap: str
    """What a partial or human rule leaves unchecked, or why nothing decides it."""
    here: str
    """What this report's results made of it on its rows."""
    decided_here: bool


@dataclass(frozen=True, slots=True)
class SkillRulesView:
    total: int
    statuses: tuple[str, ...]
    groups: tuple[GroupCount, ...]
    totals: tuple[int, ...]
    rows: tuple[str, ...]
    """Labels of the report's rows that have results (the rows its results judged)."""
    by_results: int
    """Rules a conclusive result of one of their gates decided on one of those rows."""
    by_compile: int
    """Rules whose trace names no gate: the compile decides them on every row judged."""
    not_decided: tuple[RuleRef, ...]
    """Traced rules this report's results left undecided (their gates gave no conclusive
    result on these rows)."""
    undecidable: tuple[RuleRef, ...]
    """Rules nothing in omniqual decides (``missing``, ``out_of_scope``)."""
    lines: tuple[RuleLine, ...]
    full_table: str
    """Where the full table is, for Markdown (``report.html#skill-rules``; empty: unnamed)."""


def trace_text(rule: SkillRule) -> str:
    """What decides ``rule``: ``gate/case``, ``compile module:attr`` or ``report module:attr``."""
    parts = []
    for trace in rule.decided_by:
        if isinstance(trace, GateCase):
            parts.append(f"{trace.gate}/{trace.case}")
        elif isinstance(trace, CompileRule):
            parts.append(f"compile {trace.compile_rule}")
        else:
            parts.append(f"report {trace.report_section}")
    return ", ".join(parts) or "-"


def _here(verdicts: RuleVerdicts, labels: Mapping[str, str]) -> str:
    rule = verdicts.rule
    if rule.status in UNDECIDABLE:
        return f"nothing decides it ({rule.status.value})"
    if not verdicts.rows:
        return "not decided: no results on this matrix's rows"
    if verdicts.by_compile:
        return "decided by the compile (no gate involved)"
    decided = verdicts.decided
    # One phrase per distinct verdict, naming its rows: 17 rows of "no result" read as one.
    by_why: dict[str, list[str]] = {}
    for v in verdicts.rows:
        if v.decided == decided:
            by_why.setdefault(v.why, []).append(labels.get(v.row, v.row))
    said = "; ".join(f"on {', '.join(rows)} ({why})" for why, rows in by_why.items())
    return f"{'decided' if decided else 'not decided'} {said}"


def _ref(rule: SkillRule) -> RuleRef:
    return RuleRef(rule.id, f"rule-{rule.id}")


def skill_rules_view(
    catalogue: RuleCatalogue,
    results: Sequence[GateResult],
    labels: Mapping[str, str],
    full_report: str = "",
) -> SkillRulesView:
    """The block for ``results`` on the report's rows (``labels``: row key -> ``#n``, in row
    order); ``full_report`` names the HTML report the Markdown points at for the full table."""
    with_results = {r.row for r in results}
    rows = tuple(key for key in labels if key in with_results)
    judged = rule_verdicts(catalogue, rows, results)
    groups = coverage(catalogue)
    total = totals(groups)
    lines = tuple(
        RuleLine(
            id=v.rule.id, anchor=_ref(v.rule).anchor, statement=v.rule.statement,
            status=v.rule.status.value, decided_by=trace_text(v.rule),
            gap=v.rule.missing or v.rule.reason or "", here=_here(v, labels),
            decided_here=v.decided,
        )
        for v in judged
    )  # fmt: skip
    return SkillRulesView(
        total=sum(total.values()),
        statuses=tuple(s.value for s in STATUS_ORDER),
        groups=tuple(
            GroupCount(g.group, g.title, g.total, tuple(g.counts[s] for s in STATUS_ORDER))
            for g in groups
        ),
        totals=tuple(total[s] for s in STATUS_ORDER),
        rows=tuple(labels[key] for key in rows),
        by_results=sum(1 for v in judged if v.by_results),
        by_compile=sum(1 for v in judged if v.by_compile),
        not_decided=tuple(
            _ref(v.rule) for v in judged if not v.decided and v.rule.status not in UNDECIDABLE
        ),
        undecidable=tuple(_ref(v.rule) for v in judged if v.rule.status in UNDECIDABLE),
        lines=lines,
        full_table=f"{full_report}#{TABLE_ANCHOR}" if full_report else "",
    )
