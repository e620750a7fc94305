"""JUnit XML for CI systems: one test case per gate result."""

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.result import GateResult


def write_junit(results: Sequence[GateResult], path: Path) -> None:
    suite = ET.Element("testsuite", name="omniqual", tests=str(len(results)))
    failures = errors = skipped = 0
    for result in results:
        case = ET.SubElement(
            suite, "testcase", classname=result.gate_id, name=result.row,
            time=f"{result.duration_s:.3f}",
        )  # fmt: skip
        text = "\n".join(result.reasons)
        if result.outcome in (GateOutcome.FAILED, GateOutcome.INVALID):
            failures += 1
            ET.SubElement(case, "failure", message=result.outcome.value).text = text
        elif result.outcome is GateOutcome.ERRORED:
            errors += 1
            ET.SubElement(case, "error", message="errored").text = text
        elif result.outcome is GateOutcome.SKIPPED:
            skipped += 1
            ET.SubElement(case, "skipped", message=text[:200])
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("skipped", str(skipped))
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)
