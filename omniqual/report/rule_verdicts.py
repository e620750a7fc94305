"""Which of the production skill's rules a set of gate results decided, row by row.

The one evaluation behind ``omniqual rules --matrix --evidence`` and the run report's "Skill
rules covered" block: per (gate, row) the latest result by finish time, then per rule and row
:func:`omniqual.domain.skill_rules.rule_on_row` (a conclusive verdict of one of the rule's gates
decides it). Pure: the caller reads the results and prints or renders what this returns.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from omniqual.domain.result import GateResult
from omniqual.domain.skill_rules import (
    LatestResult,
    RuleCatalogue,
    RuleOnRow,
    SkillRule,
    latest_results,
    rule_on_row,
)


@dataclass(frozen=True, slots=True)
class RuleVerdicts:
    """One rule and what decided it on each row asked about (in the order asked)."""

    rule: SkillRule
    rows: tuple[RuleOnRow, ...]

    @property
    def by_results(self) -> bool:
        """Decided on some row by a gate's conclusive result."""
        return any(v.decided and v.result_id is not None for v in self.rows)

    @property
    def by_compile(self) -> bool:
        """Decided by the compile itself (its trace names no gate) on the rows asked about."""
        return any(v.decided and v.result_id is None for v in self.rows)

    @property
    def decided(self) -> bool:
        return any(v.decided for v in self.rows)


def latest_of(results: Iterable[GateResult]) -> dict[tuple[str, str], LatestResult]:
    """Per (gate, row), the result that finished last."""
    found = [(LatestResult(r.gate_id, r.row, r.outcome, r.result_id, r.gate_kind,
                           frozenset(c.id for c in r.cases)), r.finished_at.timestamp())
             for r in results]  # fmt: skip
    return latest_results((f for f, _ in found), {f.result_id: t for f, t in found})


def rule_verdicts(
    catalogue: RuleCatalogue, rows: Sequence[str], results: Iterable[GateResult]
) -> tuple[RuleVerdicts, ...]:
    """Every rule of ``catalogue``, in its order, judged on each of ``rows`` over ``results``."""
    latest = latest_of(results)
    emitted = catalogue.emitted()
    return tuple(
        RuleVerdicts(rule, tuple(rule_on_row(rule, row, latest, emitted) for row in rows))
        for rule in catalogue.rules
    )
