"""Load the skill-rule catalogue (``gates/rules/*.yaml``) with ``file:line: field: message``
errors: each group file against its schema, then what a schema cannot say (every id of the file's
group, numbered 1..N without gaps or repeats, and no id in two files; every ``gate``/``case`` of
a trace names a gate that exists and a case its check kind offers in ``checks.yaml``)."""

from collections.abc import Mapping
from pathlib import Path

from omniqual.domain.skill_rules import (
    GROUP_ORDER,
    CaseRegistry,
    GateCase,
    RuleCatalogue,
    RuleGroupFile,
)
from omniqual.specs.source import SpecError, SpecProblem, YamlDocument, load_spec

REGISTRY_FILE = "checks.yaml"


def rules_dir(gates_dir: Path) -> Path:
    return gates_dir / "rules"


def load_rule_catalogue(
    directory: Path, gate_kinds: Mapping[str, str] | None = None
) -> RuleCatalogue:
    """Every group file of ``directory`` and its case registry; every problem at once.
    ``gate_kinds`` (gate id -> check kind) enables the trace check; None skips it."""
    registry, _ = load_spec(directory / REGISTRY_FILE, CaseRegistry)
    problems: list[SpecProblem] = []
    groups: list[RuleGroupFile] = []
    seen: dict[str, str] = {}
    paths = sorted(p for p in directory.glob("*.yaml") if p.name != REGISTRY_FILE)
    if not paths:
        raise SpecError([SpecProblem(str(directory), None, "", "no rule group files")])
    for path in paths:
        try:
            group, doc = load_spec(path, RuleGroupFile)
        except SpecError as exc:
            problems.extend(exc.problems)
            continue
        problems.extend(_group_problems(doc, group, seen, path.name))
        if gate_kinds is not None:
            problems.extend(_trace_problems(doc, group, registry, gate_kinds))
        groups.append(group)
    if problems:
        raise SpecError(problems)
    groups.sort(key=lambda g: GROUP_ORDER.index(g.group))
    return RuleCatalogue(tuple(groups), registry)


def _group_problems(
    doc: YamlDocument, group: RuleGroupFile, seen: dict[str, str], name: str
) -> list[SpecProblem]:
    problems: list[SpecProblem] = []
    for index, rule in enumerate(group.rules):
        where = ("rules", index, "id")
        if rule.group != group.group:
            problems.append(doc.problem(where, f"{rule.id} is not of group {group.group}"))
        elif rule.id in seen:
            problems.append(doc.problem(where, f"{rule.id} also in {seen[rule.id]}"))
        elif rule.number != index + 1:
            # Numbered 1..N in order: a gap or a repeat shows as the first id out of place.
            expected = f"{group.group}-{index + 1:02d}"
            problems.append(doc.problem(where, f"expected {expected} here (1..N, no gaps)"))
        seen.setdefault(rule.id, name)
    return problems


def _trace_problems(
    doc: YamlDocument,
    group: RuleGroupFile,
    registry: CaseRegistry,
    gate_kinds: Mapping[str, str],
) -> list[SpecProblem]:
    problems: list[SpecProblem] = []
    for index, rule in enumerate(group.rules):
        for at, trace in enumerate(rule.decided_by):
            if not isinstance(trace, GateCase):
                continue
            where = ("rules", index, "decided_by", at)
            kind = gate_kinds.get(trace.gate)
            if kind is None:
                problems.append(doc.problem((*where, "gate"), f"no gate {trace.gate!r}"))
                continue
            offered = registry.kinds.get(kind)
            if offered is None or trace.case not in offered.cases:
                message = f"{trace.case!r} is not a case of {trace.gate} ({kind}) in checks.yaml"
                problems.append(doc.problem((*where, "case"), message))
    return problems
