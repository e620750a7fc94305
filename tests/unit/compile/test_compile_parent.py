"""A candidate row counts only beside its parent's own correctness evidence: both compile paths
leave it `not tested`, naming the parent, until the parent's correctness gate has a latest usable
pass (reference-parity for a baseline parent, and the whole chain for a candidate parent)."""

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
  - name: quantization
    description: quantization
    values: [{name: none}, {name: fp8}, {name: int8}]
"""
MATRIX = """\
name: family
rows:
  - key: {model: m, quantization: none}
    requires: [api-contract, strict-load, reference-parity]
  - key: {model: m, quantization: fp8}
    parent_row: {model: m, quantization: none}
    requires: [parity]
  - key: {model: m, quantization: int8}
    parent_row: {model: m, quantization: fp8}
    requires: [parity]
    unsupported_by: [fails-fast]
"""
BASE, FP8, INT8 = (f"model=m;quantization={q}" for q in ("none", "fp8", "int8"))
GATES = {g: CurrentGate(1) for g in
         ("api-contract", "strict-load", "reference-parity", "parity", "fails-fast")}  # fmt: skip


@pytest.fixture
def matrix(tmp_path: Path) -> LoadedMatrix:
    (tmp_path / "axes.yaml").write_text(AXES)
    (tmp_path / "family.yaml").write_text(MATRIX)
    return load_matrix(tmp_path / "family.yaml")


def compiled(root: Path, matrix: LoadedMatrix) -> dict[str, CompiledRow]:
    """Both compile paths, which must agree; the rows by key."""
    now = datetime(2026, 2, 1, tzinfo=UTC)
    via_journal = compile_matrix(matrix, GATES, collect_results([root], root), now=now)
    via_digest: CompiledMatrix = compile_digests(
        matrix, GATES, collect_digests([root], root), now=now
    )
    assert via_digest == via_journal
    return {row.key: row for row in via_journal.rows}


def test_a_candidate_without_its_parents_correctness_pass_is_not_tested(
    tmp_path: Path, matrix: LoadedMatrix
) -> None:
    runs = tmp_path / "runs"
    record_run(runs, [("parity", FP8, O.PASSED)])
    fp8 = compiled(runs, matrix)[FP8]
    assert fp8.state is CellState.NOT_TESTED
    assert any(BASE in r and "reference-parity" in r for r in fp8.reasons), fp8.reasons
    record_run(runs, [("reference-parity", BASE, O.FAILED)], start_minute=5)
    fp8 = compiled(runs, matrix)[FP8]
    assert fp8.state is CellState.NOT_TESTED
    assert any(BASE in r and "reference-parity: latest result failed" in r for r in fp8.reasons)
    # The parent's own correctness gate is what counts, not the parent's whole row.
    record_run(runs, [("reference-parity", BASE, O.PASSED)], start_minute=10)
    rows = compiled(runs, matrix)
    assert rows[BASE].state is CellState.NOT_TESTED
    assert rows[FP8].state is CellState.VALIDATED


def test_a_candidate_of_a_candidate_needs_the_whole_chain(
    tmp_path: Path, matrix: LoadedMatrix
) -> None:
    runs = tmp_path / "runs"
    record_run(runs, [("parity", INT8, O.PASSED), ("parity", FP8, O.PASSED)])
    int8 = compiled(runs, matrix)[INT8]
    assert int8.state is CellState.NOT_TESTED
    assert any(FP8 in r and BASE in r for r in int8.reasons), int8.reasons
    record_run(runs, [("reference-parity", BASE, O.PASSED)], start_minute=5)
    assert compiled(runs, matrix)[INT8].state is CellState.VALIDATED


def test_a_refusal_needs_no_parent_evidence(tmp_path: Path, matrix: LoadedMatrix) -> None:
    runs = tmp_path / "runs"
    record_run(runs, [("fails-fast", INT8, O.PASSED)])
    assert compiled(runs, matrix)[INT8].state is CellState.UNSUPPORTED
