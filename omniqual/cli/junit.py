"""JUnit XML for CI systems: a test case per gate result and one per case of that result.

A gate result is one ``<testcase>`` (class = gate id, name = row), so a result whose verdict
rests on no single case (a side-effect check, a resource bound) still shows; a case-based gate
(API contract, aborts, fail-fast launches) adds one ``<testcase>`` per case, named
``<row> :: <case id>``. ``failed`` and ``invalid`` are failures whose message is the reason,
``errored`` an error, ``skipped`` a skip. Every test case carries its evidence as properties:
the run directory holding it (``evidence``) and the result id.
"""

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from omniqual.domain.evidence import CaseResult
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.result import GateResult

_MESSAGE_LIMIT = 1000
"""Characters of the reason kept in the ``message`` attribute (the element text has it all)."""


def write_junit(
    results: Sequence[GateResult], path: Path, *, evidence_root: Path | None = None
) -> None:
    """Write ``results`` to ``path``. ``evidence_root`` is the run root the results were
    recorded under; each test case's ``evidence`` property is its run directory there."""
    suite = ET.Element("testsuite", name="omniqual")
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for result in results:
        evidence = str(evidence_root / result.run_id) if evidence_root else result.run_id
        reason = "\n".join((
            *result.reasons,
            *(f"limitation: {x}" for x in result.limitations),
            *([f"{result.error.type}: {result.error.message}"] if result.error else []),
        ))  # fmt: skip
        case = _testcase(suite, result.gate_id, result.row, f"{result.duration_s:.3f}")
        _properties(case, evidence, result, None)
        _verdict(case, result.outcome, reason or f"gate {result.outcome.value}", counts)
        for item in result.cases:
            case = _testcase(suite, result.gate_id, f"{result.row} :: {item.id}", "0.000")
            _properties(case, evidence, result, item)
            _verdict(case, item.outcome, case_reason(item), counts)
    for name, value in counts.items():
        suite.set(name, str(value))
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)


def case_reason(case: CaseResult) -> str:
    """What a case concluded, in one line: its note, else the statuses it compared."""
    where = f"{case.endpoint} {case.field}" if case.field else case.endpoint
    statuses = f"expected {case.expected_status}, observed {case.observed_status}"
    deviation = " (declared deviation)" if case.deviation else ""
    note = f": {case.note}" if case.note else ""
    return f"{where}: {statuses}{deviation}{note}"


def _testcase(suite: ET.Element, classname: str, name: str, time: str) -> ET.Element:
    return ET.SubElement(suite, "testcase", classname=classname, name=name, time=time)


def _properties(
    case: ET.Element, evidence: str, result: GateResult, item: CaseResult | None
) -> None:
    properties = ET.SubElement(case, "properties")
    values = {
        "evidence": evidence,
        "result_id": result.result_id,
        "gate_version": str(result.gate_version),
        "target": result.target,
        "outcome": (item or result).outcome.value,
    }
    if item is not None:
        values["case"] = item.id
    for name, value in values.items():
        ET.SubElement(properties, "property", name=name, value=value)


def _verdict(case: ET.Element, outcome: GateOutcome, reason: str, counts: dict[str, int]) -> None:
    counts["tests"] += 1
    message = "; ".join(line for line in reason.splitlines() if line)[:_MESSAGE_LIMIT]
    if outcome in (GateOutcome.FAILED, GateOutcome.INVALID):
        counts["failures"] += 1
        element = ET.SubElement(case, "failure", message=message, type=outcome.value)
        element.text = reason
    elif outcome is GateOutcome.ERRORED:
        counts["errors"] += 1
        ET.SubElement(case, "error", message=message, type="errored").text = reason
    elif outcome is GateOutcome.SKIPPED:
        counts["skipped"] += 1
        ET.SubElement(case, "skipped", message=message)
