"""API-contract results for the golden files, with every case judged by the check's own judge.

A small contract (the ``n`` and ``size`` fields of FLUX.1-dev's image endpoint) and one declared
deviation of the 0.30 release: ``n=0`` answered 422 where the contract says 400. Cases are
judged from the answers given; the gate's verdict, reasons and limitation sentences are
composed the way ``omniqual.checks.api_contract.check`` composes them.
"""

from dataclasses import dataclass

from omniqual.checks.api_contract.cases import Case, generate_cases
from omniqual.checks.api_contract.exchange import Exchange
from omniqual.checks.api_contract.judge import Judgement, judge
from omniqual.checks.base import verdict
from omniqual.client.raw import RawResponse
from omniqual.client.schemas import ErrorInfo
from omniqual.domain.contract import Deviation, EndpointContract
from omniqual.domain.evidence import CaseResult, Measurement
from omniqual.domain.outcomes import GateOutcome

RELEASE = "0.30.0"
ENDPOINT = EndpointContract.model_validate({
    "api_mode": "images-generations", "task": "t2i",
    "probe": {"prompt": "a red fox", "size": "1024x1024", "n": 1},
    "fields": [{"name": "n", "type": "int", "min": 1, "max": 4, "source": "pipeline"},
               {"name": "size", "type": "size", "min": 256, "max": 2048, "multiple_of": 16,
                "source": "pipeline"}],
    "output": {"kind": "image", "count_field": "n", "size_field": "size"},
})  # fmt: skip
DEVIATIONS = (
    Deviation(release="0.30.*", cases=("*/n/below-min",), observed_status=422,
              reason="release answers 422 for schema errors"),
)  # fmt: skip
CASES = {case.id: case for case in generate_cases(ENDPOINT)}
N_ZERO = "images-generations/n/below-min"
N_TOO_MANY = "images-generations/n/above-max"
SIZE_TOO_LARGE = "images-generations/size/above-max"


def _answer(case: Case, status: int, param: str) -> Exchange:
    error = ErrorInfo(shape="error", message=f"invalid value for {param}", param=f"body.{param}")
    raw = RawResponse(
        method="POST", path=ENDPOINT.path, url=f"http://127.0.0.1:8091{ENDPOINT.path}",
        status=status, headers={}, body=b"", elapsed_s=0.05, content_type="application/json",
        error=error,
    )  # fmt: skip
    return Exchange(raw)


@dataclass(frozen=True, slots=True)
class ContractRun:
    """What the check records for a set of judged cases."""

    outcome: GateOutcome
    reasons: tuple[str, ...]
    cases: tuple[CaseResult, ...]
    limitations: tuple[str, ...]
    measurements: tuple[Measurement, ...]


def contract_run(answers: dict[str, int]) -> ContractRun:
    """Judge each case (by id) against the HTTP status the server answered it with."""
    judged: list[Judgement] = []
    for case_id, status in answers.items():
        case = CASES[case_id]
        exchange = _answer(case, status, case.field or "request")
        judged.append(judge(case, exchange, ENDPOINT, deviations=DEVIATIONS, release=RELEASE))
    failures = [j.failure for j in judged if j.failure is not None]
    deviating = [j.result for j in judged if j.deviation is not None]
    reasons = (*failures, *(f"declared deviation: {r.id}: observed {r.observed_status}, "
                            f"expected {r.expected_status}" for r in deviating))  # fmt: skip
    # One sentence per reproduced declaration, worded as the check words it.
    limitations = tuple(
        f"{d.reason.rstrip('.')} (seen: "
        + "; ".join(f"{j.result.id} ({j.result.sent}) -> HTTP {j.result.observed_status}"
                    for j in judged if j.deviation == d)
        + ")."
        for d in DEVIATIONS
        if any(j.deviation == d for j in judged)
    )  # fmt: skip
    measurements = (
        Measurement(name="cases", value=len(judged), unit="count"),
        Measurement(name="cases_failed", value=len(failures), unit="count"),
        Measurement(name="declared_deviations", value=len(deviating), unit="count"),
    )
    return ContractRun(verdict(failures), reasons, tuple(j.result for j in judged), limitations,
                       measurements)  # fmt: skip
