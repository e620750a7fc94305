"""Compiling the mini matrix from recorded runs."""

from pathlib import Path

from omniqual.domain.outcomes import CellState
from omniqual.domain.outcomes import GateOutcome as O
from omniqual.engine.matrix_service import compile_from_dirs, load_project_matrix
from tests.fakes.evidence import record_run

MINI = Path(__file__).resolve().parents[2] / "data" / "mini-project" / "matrices" / "mini.yaml"
BASE = "model=m;task=t2i;quantization=none;hardware=cpu"
FP8 = "model=m;task=t2i;quantization=fp8;hardware=cpu"
T2V = "model=m;task=t2v;quantization=none;hardware=cpu"


def states(tmp_path: Path) -> dict[str, CellState]:
    compiled = compile_from_dirs(load_project_matrix(MINI), [tmp_path], None)
    return {row.key: row.state for row in compiled.rows}


def test_no_evidence_means_not_tested(tmp_path: Path) -> None:
    assert set(states(tmp_path).values()) == {CellState.NOT_TESTED}


def test_each_state_from_its_evidence(tmp_path: Path) -> None:
    record_run(
        tmp_path,
        [
            ("contract", BASE, O.PASSED), ("load", BASE, O.PASSED),
            ("ff", FP8, O.PASSED),
            ("contract", T2V, O.FAILED), ("ff", T2V, O.PASSED),
        ],
    )  # fmt: skip
    got = states(tmp_path)
    assert got[BASE] is CellState.VALIDATED
    assert got[FP8] is CellState.UNSUPPORTED
    # t2v: full requirement failed, but its bounded subset needs `contract` too: not limited.
    assert got[T2V] is CellState.NOT_TESTED


def test_evidence_on_another_row_does_not_transfer(tmp_path: Path) -> None:
    record_run(tmp_path, [("contract", T2V, O.PASSED), ("load", T2V, O.PASSED)])
    assert states(tmp_path)[BASE] is CellState.NOT_TESTED


def test_a_later_run_demotes(tmp_path: Path) -> None:
    record_run(tmp_path, [("contract", BASE, O.PASSED), ("load", BASE, O.PASSED)])
    assert states(tmp_path)[BASE] is CellState.VALIDATED
    record_run(tmp_path, [("load", BASE, O.FAILED)], start_minute=10)
    assert states(tmp_path)[BASE] is CellState.NOT_TESTED


def test_compiled_rows_link_to_their_evidence(tmp_path: Path) -> None:
    record_run(tmp_path, [("contract", BASE, O.PASSED), ("load", BASE, O.PASSED)])
    compiled = compile_from_dirs(load_project_matrix(MINI), [tmp_path], tmp_path / "out.json")
    row = next(r for r in compiled.rows if r.key == BASE)
    assert {e.gate_id for e in row.evidence} == {"contract", "load"}
    assert all(e.link.endswith(f"journal.jsonl#{e.result_id}") for e in row.evidence)
    assert all(len(e.artifacts) == 1 for e in row.evidence)


def test_compile_keeps_the_latest_per_bucket_and_counts_the_rest(tmp_path: Path) -> None:
    record_run(
        tmp_path,
        [
            ("contract", BASE, O.INVALID), ("contract", BASE, O.INVALID),
            ("contract", BASE, O.FAILED), ("contract", BASE, O.PASSED),
            ("load", BASE, O.PASSED), ("contract", BASE, O.ERRORED),
        ],
    )  # fmt: skip
    compiled = compile_from_dirs(load_project_matrix(MINI), [tmp_path], None)
    row = next(r for r in compiled.rows if r.key == BASE)
    assert row.state is CellState.VALIDATED
    assert "3 invalid/errored/skipped result(s) are not evidence" in row.reasons
    assert row.gate_outcomes["contract"] == "errored"
