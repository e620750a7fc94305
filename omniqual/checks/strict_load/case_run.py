"""One named case of the strict-load gate beyond the checkpoint mapping (the load-path scan, the
doctored start-up): its recorded case, what it adds to the gate's failures and invalidity, and
its evidence. A case that cannot run here is absent: recorded as skipped with the reason, never
counted as a pass."""

from dataclasses import dataclass, field

from pydantic import JsonValue

from omniqual.domain.evidence import Artifact, CaseResult, Measurement
from omniqual.domain.outcomes import GateOutcome


@dataclass(frozen=True, slots=True)
class CaseRun:
    case: CaseResult
    failures: tuple[str, ...] = ()
    invalid: tuple[str, ...] = ()
    measurements: tuple[Measurement, ...] = ()
    artifacts: tuple[Artifact, ...] = ()
    summary: dict[str, JsonValue] = field(default_factory=dict)
    """What the gate's ``effective`` block records of the case."""


def absent(case_id: str, endpoint: str, expected: str, reason: str) -> CaseRun:
    case = CaseResult(
        id=case_id, endpoint=endpoint, expected_status=expected, observed_status="not run",
        outcome=GateOutcome.SKIPPED, note=reason,
    )  # fmt: skip
    return CaseRun(case, summary={"run": False, "reason": reason})


def outcome_of(failures: list[str], invalid: list[str]) -> GateOutcome:
    if failures:
        return GateOutcome.FAILED
    return GateOutcome.INVALID if invalid else GateOutcome.PASSED
