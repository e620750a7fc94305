"""Stable rejections (SKILL G0-07): a rejection is an error class, not a moment. Each rejection
the gate sends is sent a second time and must answer the same class (status, and the error
envelope's type, code and param); the sync and async video paths must answer the same class
for the same invalid request. A pair a declared deviation of the release covers on either side
is a recorded difference already and is not compared. Any other difference fails the gate,
naming the case and both classes."""

from collections.abc import Callable
from dataclasses import dataclass, field

from omniqual.client import RawResponse
from omniqual.domain.evidence import CaseResult
from omniqual.domain.outcomes import GateOutcome

STABILITY_CASE = "contract/rejection-stability"
SYNC_ASYNC = ("videos-sync", "videos-async")

ErrorClass = tuple[int, str | None, str | None, str | None]
"""(HTTP status, error type, error code, error param)."""


def error_class(raw: RawResponse) -> ErrorClass:
    error = raw.error
    if error is None:
        return (raw.status, None, None, None)
    code = None if error.code is None else str(error.code)
    return (raw.status, error.type, code, error.param)


def shown(found: ErrorClass) -> str:
    status, kind, code, param = found
    return f"HTTP {status} (type {kind}, code {code}, param {param})"


@dataclass(slots=True)
class StabilityRecord:
    """The first answer's class per rejected case, and what its repeat answered."""

    first: dict[str, ErrorClass] = field(default_factory=dict)
    repeated: int = 0
    failures: list[str] = field(default_factory=list)

    def answered(self, case_id: str, first: ErrorClass, again: ErrorClass | None) -> None:
        self.first[case_id] = first
        if again is None:
            return
        self.repeated += 1
        if again != first:
            self.failures.append(f"unstable_rejection: {case_id} answered {shown(first)}, then "
                                 f"{shown(again)} to the same request (SKILL G0-07)")  # fmt: skip

    def finish(self, declared: Callable[[str], bool]) -> tuple[CaseResult, list[str]]:
        """The recorded check and its failures; ``declared(case_id)``: a declared deviation of
        this release covers the case."""
        compared = 0
        sync, asynchronous = SYNC_ASYNC
        for case_id, found in sorted(self.first.items()):
            mode, _, rest = case_id.partition("/")
            other_id = f"{asynchronous}/{rest}"
            other = self.first.get(other_id)
            if mode != sync or other is None or declared(case_id) or declared(other_id):
                continue
            compared += 1
            if other != found:
                self.failures.append(
                    f"sync_async_rejection_differs: {case_id} answered {shown(found)}, "
                    f"{other_id} {shown(other)}: one invalid request, one error class on both "
                    "paths (SKILL G0-07)"
                )
        outcome = GateOutcome.FAILED if self.failures else GateOutcome.PASSED
        if not self.repeated and not compared:
            outcome = GateOutcome.SKIPPED
        note = (f"{self.repeated} rejection(s) sent twice; {compared} sync/async pair(s) "
                "compared")  # fmt: skip
        result = CaseResult(id=STABILITY_CASE, endpoint="-", expected_status="the same error "
                            "class on repeat and on both video paths",
                            observed_status=f"{len(self.failures)} differing", outcome=outcome,
                            note=note)  # fmt: skip
        return result, list(self.failures)
