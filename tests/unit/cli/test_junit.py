"""JUnit XML parsed back: a test case per result and per case, reasons as failure messages,
the evidence run directory as a property."""

import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

from omniqual.cli.junit import write_junit
from omniqual.domain.evidence import CaseResult, ErrorInfo
from omniqual.domain.outcomes import GateOutcome as O
from omniqual.domain.result import GateResult

T0 = datetime(2026, 1, 1, tzinfo=UTC)
ROW = "model=m;task=t2i"


def make(gate: str, outcome: O, **extra: object) -> GateResult:
    return GateResult.model_validate({
        "result_id": f"{gate}-{outcome.value}", "run_id": "run-1", "gate_id": gate,
        "gate_version": 2, "gate_kind": "k", "row": ROW, "outcome": outcome, "target": "sd3",
        "started_at": T0, "finished_at": T0, **extra,
    })  # fmt: skip


def case(case_id: str, outcome: O, note: str = "") -> CaseResult:
    return CaseResult(id=case_id, endpoint="/v1/images/generations", field="size",
                      expected_status="400", observed_status="200" if note else "400",
                      outcome=outcome, note=note)  # fmt: skip


def parse(path: Path) -> tuple[ET.Element, dict[str, ET.Element]]:
    suite = ET.parse(path).getroot()
    return suite, {f"{c.get('classname')}/{c.get('name')}": c for c in suite.iter("testcase")}


def props(testcase: ET.Element) -> dict[str, str]:
    return {p.get("name", ""): p.get("value", "") for p in testcase.iter("property")}


def test_one_testcase_per_case_with_reason_and_evidence(tmp_path: Path) -> None:
    contract = make(
        "api-contract", O.FAILED, reasons=("1 of 2 cases failed",),
        cases=(case("size-ok", O.PASSED), case("size-too-big", O.FAILED, "accepted 4096x4096")),
    )  # fmt: skip
    soak = make("soak", O.INVALID, reasons=("too few samples for p90",))
    crashed = make("abort", O.ERRORED, error=ErrorInfo(type="OSError", message="no space"))
    skipped = make("parity", O.SKIPPED, reasons=("no baseline row",))
    path = tmp_path / "out" / "junit.xml"
    write_junit([contract, soak, crashed, skipped], path, evidence_root=tmp_path / "runs")
    suite, cases = parse(path)
    assert len(cases) == 6  # four results + two cases
    assert suite.get("tests") == "6" and suite.get("failures") == "3"
    assert suite.get("errors") == "1" and suite.get("skipped") == "1"

    failed_case = cases[f"api-contract/{ROW} :: size-too-big"]
    failure = failed_case.find("failure")
    assert failure is not None
    message = failure.get("message", "")
    assert "accepted 4096x4096" in message and "expected 400, observed 200" in message
    assert props(failed_case) == {
        "evidence": str(tmp_path / "runs" / "run-1"), "result_id": "api-contract-failed",
        "gate_version": "2", "target": "sd3", "outcome": "failed", "case": "size-too-big",
    }  # fmt: skip
    passed_case = cases[f"api-contract/{ROW} :: size-ok"]
    assert list(passed_case.iter("failure")) == []
    assert props(passed_case)["evidence"] == str(tmp_path / "runs" / "run-1")

    gate_level = cases[f"api-contract/{ROW}"].find("failure")
    assert gate_level is not None and gate_level.get("message") == "1 of 2 cases failed"
    invalid = cases[f"soak/{ROW}"].find("failure")
    assert invalid is not None
    assert (invalid.get("type"), invalid.get("message")) == ("invalid", "too few samples for p90")
    error = cases[f"abort/{ROW}"].find("error")
    assert error is not None and error.get("message") == "OSError: no space"
    skip = cases[f"parity/{ROW}"].find("skipped")
    assert skip is not None and skip.get("message") == "no baseline row"


def test_a_result_without_cases_is_one_testcase_and_passes_clean(tmp_path: Path) -> None:
    path = tmp_path / "j.xml"
    write_junit([make("strict-load", O.PASSED)], path)
    suite, cases = parse(path)
    (only,) = cases.values()
    assert suite.get("tests") == "1" and suite.get("failures") == "0"
    assert [child.tag for child in only] == ["properties"]
    assert props(only)["evidence"] == "run-1"  # no root given: the run id still names it
