"""Small builders for report unit tests: rows, matrices and gate results with fixed times."""

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from omniqual.domain.matrix import CompiledMatrix, CompiledRow, EvidenceRef
from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.domain.result import GateResult

T0 = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
AXES = ("model", "task", "quantization", "hardware")

RowFactory = Callable[..., CompiledRow]
MatrixFactory = Callable[..., CompiledMatrix]
ResultFactory = Callable[..., GateResult]


def _row(state: CellState, **fields: object) -> CompiledRow:
    axes = {"model": "flux", "task": "t2i", "quantization": "bf16", "hardware": "h200"}
    extra = fields.pop("axes", {})
    assert isinstance(extra, dict)
    axes.update(extra)
    key = ";".join(f"{a}={axes[a]}" for a in AXES)
    data: dict[str, object] = {
        "key": key,
        "axes": axes,
        "state": state,
        "reasons": () if state is CellState.VALIDATED else (f"why {state.value}",),
        "required_gates": ("g1",),
    }
    if state is not CellState.NOT_TESTED:
        data["evidence"] = (
            EvidenceRef(
                run_id="run-1",
                result_id=f"res-{key}",
                gate_id="g1",
                outcome="passed",
                artifacts=("ab" * 32,),
                link="runs/run-1/result.json",
            ),
        )
    data.update(fields)
    return CompiledRow.model_validate(data)


def _matrix(*rows: CompiledRow, name: str = "m1", at: datetime = T0) -> CompiledMatrix:
    return CompiledMatrix(name=name, title="Test matrix", axes=AXES, compiled_at=at, rows=rows)


def _result(gate: str = "g1", kind: str = "parity", **fields: object) -> GateResult:
    data: dict[str, object] = {
        "result_id": f"res-{gate}",
        "run_id": "run-1",
        "gate_id": gate,
        "gate_version": 1,
        "gate_kind": kind,
        "row": "model=flux;task=t2i;quantization=bf16;hardware=h200",
        "outcome": GateOutcome.PASSED,
        "target": "http://127.0.0.1:9",
        "started_at": T0,
        "finished_at": T0 + timedelta(seconds=2),
    }
    data.update(fields)
    return GateResult.model_validate(data)


@pytest.fixture
def make_row() -> RowFactory:
    return _row


@pytest.fixture
def make_matrix() -> MatrixFactory:
    return _matrix


@pytest.fixture
def make_result() -> ResultFactory:
    return _result


@pytest.fixture
def every_state_matrix() -> CompiledMatrix:
    """One row per state, differing only in quantization."""
    return _matrix(
        *(_row(state, axes={"quantization": f"q{i}"}) for i, state in enumerate(CellState))
    )
