"""Some rows ask more of their parent than its correctness (``omniqual.domain.promotion``): a
step/N row counts only once its step/1 row passed every gate it requires and the step-boundary
abort (G7-02), an FP8 combination only once the FP8 row it descends from passed every gate it
requires (G3-04). Both compile paths leave such a row `not tested`, naming what is missing."""

from datetime import UTC, datetime
from pathlib import Path

import pytest

from omniqual.compile.classes import compile_digests
from omniqual.compile.collect import collect_digests, collect_results
from omniqual.compile.matrix import compile_matrix
from omniqual.domain.matrix import CompiledMatrix, CompiledRow, LoadedMatrix
from omniqual.domain.outcomes import CellState
from omniqual.domain.outcomes import GateOutcome as O
from omniqual.domain.rules import CurrentGate
from omniqual.specs.matrix import load_matrix
from tests.fakes.evidence import record_run

AXES = """\
axes:
  - {name: model, description: model, open_ended: true}
  - name: execution
    description: execution
    values: [{name: serial/1}, {name: step/1}, {name: step/2}]
  - name: quantization
    description: quantization
    values: [{name: none}, {name: fp8-online-dit}]
  - name: offload
    description: offload
    values: [{name: resident}, {name: layerwise}]
"""
MATRIX = """\
name: family
defaults: {execution: serial/1, quantization: none, offload: resident}
rows:
  - key: {model: m}
    requires: [api-contract, strict-load, reference-parity]
  - key: {model: m, execution: step/1}
    parent_row: {model: m}
    requires: [parity, soak]
  - key: {model: m, execution: step/2}
    parent_row: {model: m, execution: step/1}
    requires: [parity, isolation]
  - key: {model: m, quantization: fp8-online-dit}
    parent_row: {model: m}
    requires: [parity, soak]
  - key: {model: m, quantization: fp8-online-dit, offload: layerwise}
    parent_row: {model: m, quantization: fp8-online-dit}
    requires: [parity]
"""
BASE = "model=m;execution=serial/1;quantization=none;offload=resident"
STEP1 = "model=m;execution=step/1;quantization=none;offload=resident"
STEP2 = "model=m;execution=step/2;quantization=none;offload=resident"
FP8 = "model=m;execution=serial/1;quantization=fp8-online-dit;offload=resident"
COMBO = "model=m;execution=serial/1;quantization=fp8-online-dit;offload=layerwise"
GATES = {g: CurrentGate(1) for g in ("api-contract", "strict-load", "reference-parity",
                                     "parity", "soak", "abort", "isolation")}  # fmt: skip


@pytest.fixture
def matrix(tmp_path: Path) -> LoadedMatrix:
    (tmp_path / "axes.yaml").write_text(AXES)
    (tmp_path / "family.yaml").write_text(MATRIX)
    return load_matrix(tmp_path / "family.yaml")


def compiled(root: Path, matrix: LoadedMatrix) -> dict[str, CompiledRow]:
    now = datetime(2026, 2, 1, tzinfo=UTC)
    via_journal = compile_matrix(matrix, GATES, collect_results([root], root), now=now)
    via_digest: CompiledMatrix = compile_digests(
        matrix, GATES, collect_digests([root], root), now=now
    )
    assert via_digest == via_journal
    return {row.key: row for row in via_journal.rows}


def test_step_n_waits_for_its_step_1_row_and_its_step_boundary_abort(
    tmp_path: Path, matrix: LoadedMatrix
) -> None:
    runs = tmp_path / "runs"
    record_run(runs, [("reference-parity", BASE, O.PASSED), ("parity", STEP1, O.PASSED),
                      ("parity", STEP2, O.PASSED), ("isolation", STEP2, O.PASSED)])  # fmt: skip
    rows = compiled(runs, matrix)
    assert rows[STEP2].state is CellState.NOT_TESTED
    assert any(STEP1 in r and "soak" in r and "G7-02" in r for r in rows[STEP2].reasons)
    record_run(runs, [("soak", STEP1, O.PASSED)], start_minute=5)
    rows = compiled(runs, matrix)
    assert rows[STEP1].state is CellState.VALIDATED
    # step/1 is validated on what it requires, yet step/N also waits for the step-boundary abort.
    assert rows[STEP2].state is CellState.NOT_TESTED
    assert any("abort" in r for r in rows[STEP2].reasons), rows[STEP2].reasons
    record_run(runs, [("abort", STEP1, O.PASSED)], start_minute=10)
    assert compiled(runs, matrix)[STEP2].state is CellState.VALIDATED


def test_an_fp8_combination_waits_for_the_validated_fp8_row(
    tmp_path: Path, matrix: LoadedMatrix
) -> None:
    runs = tmp_path / "runs"
    record_run(runs, [("reference-parity", BASE, O.PASSED), ("parity", FP8, O.PASSED),
                      ("parity", COMBO, O.PASSED)])  # fmt: skip
    rows = compiled(runs, matrix)
    assert rows[COMBO].state is CellState.NOT_TESTED
    assert any(FP8 in r and "soak" in r and "G3-04" in r for r in rows[COMBO].reasons)
    record_run(runs, [("soak", FP8, O.FAILED)], start_minute=5)
    assert compiled(runs, matrix)[COMBO].state is CellState.NOT_TESTED
    record_run(runs, [("soak", FP8, O.PASSED)], start_minute=10)
    assert compiled(runs, matrix)[COMBO].state is CellState.VALIDATED


def test_a_plain_candidate_still_needs_only_its_parents_correctness(
    tmp_path: Path, matrix: LoadedMatrix
) -> None:
    runs = tmp_path / "runs"
    record_run(runs, [("reference-parity", BASE, O.PASSED), ("parity", STEP1, O.PASSED),
                      ("soak", STEP1, O.PASSED)])  # fmt: skip
    assert compiled(runs, matrix)[STEP1].state is CellState.VALIDATED
