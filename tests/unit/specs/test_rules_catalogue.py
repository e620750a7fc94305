"""The shipped skill-rule catalogue (``gates/rules/``) loads, is complete, and every trace in it
still points at something that exists: a gate, a case or check its kind still has in its source,
a compile rule or report section that still imports."""

import importlib
from pathlib import Path

import pytest

from omniqual.domain.skill_rules import (
    GROUP_ORDER,
    CompileRule,
    GateCase,
    ReportSection,
    RuleCatalogue,
    RuleStatus,
)
from omniqual.specs.gates import load_gates
from omniqual.specs.matrix import load_catalog
from omniqual.specs.rules import load_rule_catalogue
from omniqual.specs.source import SpecError

ROOT = Path(__file__).resolve().parents[3]
RULES = ROOT / "gates" / "rules"
CATALOGUE_SIZE = 273
"""The production skill states 273 numbered rules (265 checkable and 8 Definition-of-Done
aggregates); the catalogue carries each exactly once."""


def _gate_kinds() -> dict[str, str]:
    gates = load_gates(ROOT / "gates", load_catalog(ROOT / "matrices" / "axes.yaml"), ROOT)
    return {gate_id: gate.spec.kind for gate_id, gate in gates.items()}


@pytest.fixture(scope="module")
def catalogue() -> RuleCatalogue:
    return load_rule_catalogue(RULES, _gate_kinds())


def test_catalogue_has_every_rule_once_numbered_without_gaps(catalogue: RuleCatalogue) -> None:
    ids = [rule.id for rule in catalogue.rules]
    assert len(ids) == CATALOGUE_SIZE
    assert len(set(ids)) == CATALOGUE_SIZE
    assert [g.group for g in catalogue.groups] == list(GROUP_ORDER)
    for group in catalogue.groups:
        numbers = [rule.number for rule in group.rules]
        assert numbers == list(range(1, len(numbers) + 1)), group.group


def test_every_gate_in_a_trace_exists_and_offers_its_case(catalogue: RuleCatalogue) -> None:
    kinds = _gate_kinds()
    for rule in catalogue.rules:
        for trace in rule.decided_by:
            if isinstance(trace, GateCase):
                assert trace.gate in kinds, (rule.id, trace.gate)
                offered = catalogue.registry.kinds[kinds[trace.gate]].cases
                assert trace.case in offered, (rule.id, trace.gate, trace.case)


def _source(package: str) -> str:
    path = ROOT / package
    files = [path] if path.is_file() else sorted(path.rglob("*.py"))
    assert files, package
    return "\n".join(f.read_text(encoding="utf-8") for f in files)


def test_every_registered_case_is_still_in_its_check_kinds_source(
    catalogue: RuleCatalogue,
) -> None:
    """The registry is the explicit list of what each check kind emits or decides; a case renamed
    or dropped in the code must fail here, not leave a trace that points at nothing."""
    from omniqual.checks.registry import BUILTIN

    for kind, offered in catalogue.registry.kinds.items():
        assert kind in BUILTIN, kind
        text = _source(offered.package)
        for case, marker in offered.cases.items():
            assert marker in text, f"{kind}/{case}: {marker!r} not in {offered.package}"


def test_api_contract_cases_are_those_the_generator_emits(catalogue: RuleCatalogue) -> None:
    """Boundary case kinds come from the generator: what the shipped contracts make of them."""
    from omniqual.checks.api_contract.cases import generate_cases
    from omniqual.specs.contracts import load_contract

    emitted = {
        case.kind
        for path in sorted((ROOT / "gates" / "contracts").glob("*.yaml"))
        for endpoint in load_contract(path).endpoints
        for case in generate_cases(endpoint)
    }
    offered = catalogue.registry.kinds["api_contract"].cases
    quoted = {name for name, marker in offered.items() if marker == f'"{name}"'}
    generated = {name for name in quoted if "/" not in name and name != "known-good"}
    cited = {
        t.case for rule in catalogue.rules for t in rule.decided_by
        if isinstance(t, GateCase) and t.case in generated
    }  # fmt: skip
    assert cited <= emitted, sorted(cited - emitted)


def test_every_compile_rule_and_report_section_imports(catalogue: RuleCatalogue) -> None:
    for rule in catalogue.rules:
        for trace in rule.decided_by:
            if isinstance(trace, CompileRule):
                name = trace.compile_rule
            elif isinstance(trace, ReportSection):
                name = trace.report_section
            else:
                continue
            module, _, attr = name.partition(":")
            assert hasattr(importlib.import_module(module), attr), (rule.id, name)


def test_statuses_carry_what_they_promise(catalogue: RuleCatalogue) -> None:
    for rule in catalogue.rules:
        if rule.status in (RuleStatus.MISSING, RuleStatus.OUT_OF_SCOPE):
            assert rule.reason, rule.id
        if rule.status is RuleStatus.PARTIAL:
            assert rule.missing and rule.decided_by, rule.id


def _copy(tmp_path: Path) -> Path:
    out = tmp_path / "rules"
    out.mkdir()
    for path in RULES.glob("*.yaml"):
        (out / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    return out


def test_a_case_the_gate_does_not_offer_is_an_error_at_its_line(tmp_path: Path) -> None:
    rules = _copy(tmp_path)
    path = rules / "abort.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("case: cancel-twice", "case: cancel-thrice", 1), encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        load_rule_catalogue(rules, _gate_kinds())
    message = str(caught.value)
    assert "abort.yaml:" in message
    assert "'cancel-thrice' is not a case of abort (abort)" in message


def test_a_gate_that_does_not_exist_is_an_error(tmp_path: Path) -> None:
    rules = _copy(tmp_path)
    path = rules / "soak.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("gate: soak-long", "gate: soak-weekly", 1), encoding="utf-8")
    with pytest.raises(SpecError, match="no gate 'soak-weekly'"):
        load_rule_catalogue(rules, _gate_kinds())


def test_a_gap_in_the_numbering_is_an_error(tmp_path: Path) -> None:
    rules = _copy(tmp_path)
    path = rules / "gate-5.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("id: G5-02", "id: G5-03", 1), encoding="utf-8")
    with pytest.raises(SpecError, match="expected G5-02 here"):
        load_rule_catalogue(rules)


def test_a_partial_rule_without_what_is_missing_is_an_error(tmp_path: Path) -> None:
    rules = _copy(tmp_path)
    path = rules / "gate-1.yaml"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if not line.startswith("  missing: black-box only")]
    assert len(kept) == len(lines) - 1
    path.write_text("".join(kept), encoding="utf-8")
    with pytest.raises(SpecError, match=r"gate-1.yaml:\d+: rules.3: .*needs missing"):
        load_rule_catalogue(rules)
