"""The large golden matrix: 600 rows over models, tasks and variants, a contract result of 20
cases on every row, and a quarter of the rows in each state because of what was recorded:

- validated: the contract gate passed;
- limited: it passed reproducing a declared deviation (its case recorded as one);
- unsupported: it failed, and the fail-fast gate proved the row is refused at startup;
- not tested: it failed, and nothing proved a refusal.
"""

from datetime import datetime, timedelta
from pathlib import Path

from omniqual.domain.evidence import CaseResult
from omniqual.domain.matrix import LoadedMatrix, PlannedRow, RowSpec
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.provenance import Provenance
from omniqual.domain.result import GateResult
from omniqual.domain.rules import CurrentGate
from omniqual.domain.run import EnvironmentFingerprint
from omniqual.evidence.store import RunWriter
from tests.golden.fixture_matrix import BASE, SPEC_SHA, catalog, loaded_matrix

BIG_ROWS = 600
BIG_RUN = "run-big"
GATES = {"api-contract": CurrentGate(1, SPEC_SHA["api-contract"]), "fails-fast": CurrentGate(1)}
VARIANTS = [("quantization", q) for q in ("bf16", "fp8-online-dit", "int8")] + [
    ("offload", o) for o in ("resident", "layerwise", "cpu-offload", "dlo-allgather")
]
DEVIATION = "release answers 422 for n=0 (seen: c19 (19) -> HTTP 422)."
SPECS = (
    RowSpec(requires=("api-contract",)),
    RowSpec(requires=("api-contract",)),
    RowSpec(requires=("api-contract",), unsupported_by=("fails-fast",)),
    RowSpec(requires=("api-contract",)),
)


def _case(c: int, observed: str = "400", outcome: GateOutcome = GateOutcome.PASSED,
          **fields: object) -> CaseResult:  # fmt: skip
    return CaseResult.model_validate({
        "id": f"c{c}", "endpoint": "images-generations", "field": f"f{c % 12}", "sent": str(c),
        "expected_status": "400", "observed_status": observed, "outcome": outcome, **fields,
    })  # fmt: skip


PASSED_CASES = tuple(_case(c) for c in range(20))
DEVIATING_CASES = (*PASSED_CASES[:19], _case(19, "422", GateOutcome.FAILED, deviation=True,
                   note="declared deviation of 0.30.0: release answers 422 for n=0"))  # fmt: skip
FAILING_CASES = (_case(0, "200", GateOutcome.FAILED, note="accepted-but-invalid"),
                 *PASSED_CASES[1:])  # fmt: skip


def _changes(i: int) -> dict[str, str]:
    axis, value = VARIANTS[i % len(VARIANTS)]
    return {"model": f"model-{i // 28:02d}", "task": ("t2i", "t2v")[i // 14 % 2],
            "api_mode": ("images-generations", "videos-async")[i // 14 % 2],
            axis: value, "shape": f"{512 + 16 * (i % 2)}x512/{i % 14}steps"}  # fmt: skip


def _contract(i: int, state: int) -> dict[str, object]:
    if state == 0:
        return {"outcome": GateOutcome.PASSED, "cases": PASSED_CASES}
    if state == 1:
        return {"outcome": GateOutcome.PASSED, "cases": DEVIATING_CASES,
                "limitations": (DEVIATION,),
                "reasons": ("declared deviation: c19: observed 422, expected 400",)}  # fmt: skip
    return {
        "outcome": GateOutcome.FAILED,
        "cases": FAILING_CASES,
        "reasons": (f"c0 (reason {i}): accepted-but-invalid: 0 answered HTTP 200",),
    }


def record_big(runs: Path, environment: EnvironmentFingerprint, provenance: Provenance,
               t0: datetime) -> tuple[LoadedMatrix, dict[str, CurrentGate]]:  # fmt: skip
    """Record the big run under ``runs``; the matrix definition and current gates for it."""
    axes = catalog()
    rows = tuple(
        PlannedRow(axes.row_key({**BASE, **_changes(i)}), SPECS[i % 4], None)
        for i in range(BIG_ROWS)
    )
    loaded = LoadedMatrix(loaded_matrix(name="big").definition, axes, rows, Path("big.yaml"))
    with RunWriter.create(runs, command=("omniqual", "run", "big"), environment=environment,
                          run_id=BIG_RUN) as writer:  # fmt: skip
        # Identical bytes are one content-addressed artifact, shared by every result.
        log = writer.put_artifact(b"cases", media_type="application/x-ndjson", role="cases",
                                  name="api-contract-cases.jsonl")  # fmt: skip
        refused = writer.put_artifact(b"refused", media_type="text/plain", role="server-log",
                                      name="fail-fast-stderr.log")  # fmt: skip
        for i, row in enumerate(rows):
            at = t0 - timedelta(hours=2) + timedelta(seconds=i)
            common = {"run_id": BIG_RUN, "gate_version": 1, "row": str(row.key),
                      "target": "http://127.0.0.1:8091", "provenance": provenance,
                      "started_at": at, "finished_at": at}  # fmt: skip
            writer.record(GateResult.model_validate({
                **common, "result_id": f"big-{i:04d}", "gate_id": "api-contract",
                "gate_kind": "api_contract", "gate_spec_sha256": SPEC_SHA["api-contract"],
                "artifacts": (log,), **_contract(i, i % 4),
            }))  # fmt: skip
            if i % 4 == 2:
                writer.record(GateResult.model_validate({
                    **common, "result_id": f"big-ff-{i:04d}", "gate_id": "fails-fast",
                    "gate_kind": "fails_fast", "outcome": GateOutcome.PASSED,
                    "artifacts": (refused,),
                }))  # fmt: skip
    return loaded, GATES
