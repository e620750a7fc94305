"""The production skill's rules as data, each traced to the check that decides it.

One rule (``gates/rules/<group>.yaml``) names how the skill asks for it to be decided (``mode``)
and what in omniqual decides it (``decided_by``): a named case or check of a gate, a compile rule
or a report section (both ``module:attribute``). Its ``status`` says how much of it that is:
``decided``, ``partial`` (``missing`` says what is not checked), ``human`` (recorded for a
reviewer), ``missing`` or ``out_of_scope`` (``reason`` says why). Pure: reading the files is
:mod:`omniqual.specs.rules`'s job, printing the CLI's.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator

from omniqual.domain.outcomes import GateOutcome

GROUP_ORDER: tuple[str, ...] = (
    *(f"G{n}" for n in range(9)),
    *("MX", "EV", "BS", "AB", "SK", "DL", "F8", "SL", "CD", "SX", "OT", "DD"),
)
"""The skill's rule groups in its own order: gates 0-8, then the cross-cutting groups."""
RULE_ID_PATTERN = r"^(G[0-8]|MX|EV|BS|AB|SK|DL|F8|SL|CD|SX|OT|DD)-[0-9]{2}$"
REFERENCE_PATTERN = r"^[a-z_][a-z0-9_.]*:[A-Za-z_][A-Za-z0-9_]*$"


class RuleMode(StrEnum):
    """How the skill asks for the rule to be decided."""

    AUTOMATIC = "automatic"
    HUMAN = "human"
    INFORMATIONAL = "informational"
    """A pointer to other rules or an aggregate of them: no check of its own."""


class RuleStatus(StrEnum):
    DECIDED = "decided"
    PARTIAL = "partial"
    HUMAN = "human"
    MISSING = "missing"
    OUT_OF_SCOPE = "out_of_scope"


STATUS_ORDER: tuple[RuleStatus, ...] = tuple(RuleStatus)


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GateCase(_Frozen):
    """A named case or check of a gate (the names each check kind offers are in
    ``gates/rules/checks.yaml``)."""

    gate: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    case: str = Field(min_length=1)


class CompileRule(_Frozen):
    compile_rule: str = Field(pattern=REFERENCE_PATTERN)


class ReportSection(_Frozen):
    report_section: str = Field(pattern=REFERENCE_PATTERN)


Trace = GateCase | CompileRule | ReportSection


class SkillRule(_Frozen):
    id: str = Field(pattern=RULE_ID_PATTERN)
    statement: str = Field(min_length=1)
    mode: RuleMode
    source: str = Field(min_length=1, description="The skill's section the rule comes from.")
    status: RuleStatus
    decided_by: tuple[Trace, ...] = ()
    missing: str | None = Field(default=None, description="What a partial rule leaves unchecked.")
    reason: str | None = Field(default=None, description="Why nothing decides the rule.")

    @property
    def group(self) -> str:
        return self.id.split("-", 1)[0]

    @property
    def number(self) -> int:
        return int(self.id.split("-", 1)[1])

    @property
    def gates(self) -> tuple[str, ...]:
        """The gates named in the trace, first mention first."""
        return tuple(dict.fromkeys(t.gate for t in self.decided_by if isinstance(t, GateCase)))

    @model_validator(mode="after")
    def _trace_fits_status(self) -> "SkillRule":
        # A claim of coverage without a trace, or a gap without saying what is missing, is
        # exactly the rot this catalogue exists to prevent.
        status = self.status
        traced = (RuleStatus.DECIDED, RuleStatus.PARTIAL, RuleStatus.HUMAN)
        if status in traced and not self.decided_by:
            raise ValueError(f"status {status.value} needs decided_by")
        if status in (RuleStatus.PARTIAL, RuleStatus.HUMAN) and not self.missing:
            raise ValueError(f"status {status.value} needs missing: what is not checked")
        if status in (RuleStatus.MISSING, RuleStatus.OUT_OF_SCOPE) and not self.reason:
            raise ValueError(f"status {status.value} needs reason")
        if status is RuleStatus.DECIDED and (self.missing or self.reason):
            raise ValueError("a decided rule has nothing missing")
        return self


class RuleGroupFile(_Frozen):
    """One ``gates/rules/<group>.yaml``."""

    schema_version: int = 1
    group: str = Field(pattern=r"^(G[0-8]|MX|EV|BS|AB|SK|DL|F8|SL|CD|SX|OT|DD)$")
    title: str = Field(min_length=1)
    rules: tuple[SkillRule, ...] = Field(min_length=1)


class CheckKindCases(_Frozen):
    package: str = Field(min_length=1, description="Source path of the check kind.")
    cases: dict[str, str] = Field(
        min_length=1, description="Case or check name -> text its source must contain."
    )
    emitted: tuple[str, ...] = Field(
        default=(),
        description="Names of ``cases`` whose quoted marker is the id (or the id's last part) "
        "of a case the gate records, many only when its spec and row call for them (a contract "
        "that declares a pixel cap, an async video row): a result decides a rule through one of "
        "them only when it shows that case.",
    )

    @model_validator(mode="after")
    def _emitted_are_quoted_cases(self) -> "CheckKindCases":
        for name in self.emitted:
            marker = self.cases.get(name)
            if marker is None or not (len(marker) > 2 and marker[0] == marker[-1] == '"'):
                raise ValueError(f"emitted case {name!r} needs a quoted case id as its marker")
        return self

    def emitted_ids(self) -> dict[str, str]:
        """Each emitted name -> the case id (or its last part) a result shows it by."""
        return {name: self.cases[name][1:-1] for name in self.emitted}


class CaseRegistry(_Frozen):
    """``gates/rules/checks.yaml``: the names each check kind offers to a trace."""

    schema_version: int = 1
    kinds: dict[str, CheckKindCases]


@dataclass(frozen=True, slots=True)
class RuleCatalogue:
    groups: tuple[RuleGroupFile, ...]
    registry: CaseRegistry

    def emitted(self) -> dict[str, dict[str, str]]:
        """Check kind -> its emitted case names -> the case id a result shows each by."""
        return {kind: cases.emitted_ids() for kind, cases in self.registry.kinds.items()}

    @property
    def rules(self) -> tuple[SkillRule, ...]:
        return tuple(rule for group in self.groups for rule in group.rules)


@dataclass(frozen=True, slots=True)
class GroupCoverage:
    group: str
    title: str
    counts: Mapping[RuleStatus, int]

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def coverage(catalogue: RuleCatalogue) -> tuple[GroupCoverage, ...]:
    """Per group, how many rules have each status."""
    out = []
    for group in catalogue.groups:
        counts = {status: 0 for status in STATUS_ORDER}
        for rule in group.rules:
            counts[rule.status] += 1
        out.append(GroupCoverage(group.group, group.title, counts))
    return tuple(out)


def totals(groups: Sequence[GroupCoverage]) -> dict[RuleStatus, int]:
    return {s: sum(g.counts[s] for g in groups) for s in STATUS_ORDER}


@dataclass(frozen=True, slots=True)
class LatestResult:
    """The latest result of one gate on one row."""

    gate: str
    row: str
    outcome: GateOutcome
    result_id: str
    kind: str = ""
    case_ids: frozenset[str] = frozenset()

    def shows(self, case_id: str) -> bool:
        """Whether a case of this id, or whose id ends with ``/<case_id>``, was recorded."""
        return any(c == case_id or c.endswith(f"/{case_id}") for c in self.case_ids)


@dataclass(frozen=True, slots=True)
class RuleOnRow:
    rule: str
    row: str
    decided: bool
    result_id: str | None
    why: str


def rule_on_row(
    rule: SkillRule,
    row: str,
    latest: Mapping[tuple[str, str], LatestResult],
    emitted: Mapping[str, Mapping[str, str]] | None = None,
) -> RuleOnRow:
    """Whether ``rule`` was decided for ``row``: one of its gates' latest result on that row is
    passed or failed (a conclusive verdict; invalid, errored or skipped decided nothing) and,
    where the trace names a case that gate records only when its spec calls for it
    (``emitted``: check kind -> case name -> case id), shows that case: an api-contract result
    on a row whose contract declares no pixel cap never decides the pixel-cap rule. A rule the
    trace leaves missing or out of scope is never decided; one traced only to compile rules or
    report sections is decided by the compile itself, for every row."""
    if rule.status in (RuleStatus.MISSING, RuleStatus.OUT_OF_SCOPE):
        return RuleOnRow(rule.id, row, False, None, f"nothing decides it ({rule.status.value})")
    gates = rule.gates
    if not gates:
        return RuleOnRow(rule.id, row, True, None, "decided by the compile (no gate involved)")
    seen: list[str] = []
    for trace in rule.decided_by:
        if not isinstance(trace, GateCase):
            continue
        found = latest.get((trace.gate, row))
        if found is None:
            continue
        if not found.outcome.conclusive:
            seen.append(f"{trace.gate} {found.outcome.value}")
            continue
        case_id = (emitted or {}).get(found.kind, {}).get(trace.case)
        if case_id is None or found.shows(case_id):
            return RuleOnRow(rule.id, row, True, found.result_id,
                             f"{trace.gate} {found.outcome.value}")  # fmt: skip
        seen.append(f"{trace.gate} {found.outcome.value} without a {trace.case} case")
    seen = list(dict.fromkeys(seen))
    why = "; ".join(seen) if seen else f"no result of {', '.join(gates)} on this row"
    return RuleOnRow(rule.id, row, False, None, why)


def latest_results(
    results: Iterable[LatestResult], order: Mapping[str, float]
) -> dict[tuple[str, str], LatestResult]:
    """Per (gate, row), the result latest by ``order`` (result id -> finish time)."""
    best: dict[tuple[str, str], LatestResult] = {}
    for result in results:
        key = (result.gate, result.row)
        held = best.get(key)
        if held is None or order[result.result_id] >= order[held.result_id]:
            best[key] = result
    return best
