"""Compiling from the columnar digests gives the very CompiledMatrix the journal path gives.

The fixture mixes everything the rule table reads: all five outcomes, startup-only records,
reproduced limitations, more than three reasons, stale versions and spec hashes, pinned and
unknown revisions, results without artifacts, equal finish times, other UTC offsets, rows off
the matrix, several runs, and a run still unfinished (no digest: rebuilt from its journal).
"""

import random
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from omniqual.compile import classes as compile_classes
from omniqual.compile.classes import compile_digests
from omniqual.compile.collect import collect_digests, collect_results
from omniqual.compile.matrix import compile_matrix
from omniqual.domain.axes import AxisCatalog
from omniqual.domain.evidence import Artifact
from omniqual.domain.matrix import (
    CompiledMatrix,
    LimitedSpec,
    LoadedMatrix,
    MatrixDefinition,
    PlannedRow,
    RowSpec,
)
from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.domain.provenance import Provenance
from omniqual.domain.result import GateResult
from omniqual.domain.rules import CurrentGate
from omniqual.evidence.run_digest import DIGEST_NAME
from omniqual.evidence.store import RunWriter
from tests.fakes.evidence import FINGERPRINT

GATES = ("contract", "load", "ff", "soak")
CURRENT = {"contract": CurrentGate(1, "c" * 64), "load": CurrentGate(2, "d" * 64),
           "ff": CurrentGate(1, None), "soak": CurrentGate(1, "e" * 64)}  # fmt: skip
T0 = datetime(2026, 1, 1, tzinfo=UTC)
SPECS = (
    RowSpec(requires=("contract", "load")),
    RowSpec(requires=("contract",), unsupported_by=("ff",)),
    RowSpec(
        requires=("contract", "soak"),
        limited=LimitedSpec(limitation="only 5 frames", requires=("contract",), rejection=("ff",)),
    ),
    RowSpec(unsupported_by=("ff",), declared=CellState.UNSUPPORTED, note="a note"),
)


def mixed_matrix(n_rows: int = 40) -> LoadedMatrix:
    catalog = AxisCatalog.model_validate(
        {"axes": [{"name": "model", "description": "m", "open_ended": True},
                  {"name": "task", "description": "t", "open_ended": True}]}
    )  # fmt: skip
    rows = tuple(
        PlannedRow(catalog.row_key({"model": f"m{i % 7}", "task": f"t{i}"}), SPECS[i % 4], None)
        for i in range(n_rows)
    )
    definition = MatrixDefinition(name="mixed", target=Provenance(vllm_omni_version="0.30.0"))
    return LoadedMatrix(definition, catalog, rows, Path("mixed.yaml"))


def _result(writer: RunWriter, rng: random.Random, keys: list[str], i: int) -> GateResult:
    gate = rng.choice(GATES)
    outcome = rng.choice([GateOutcome.PASSED] * 4 + [GateOutcome.FAILED] * 2 + list(GateOutcome))
    artifacts: tuple[Artifact, ...] = ()
    if rng.random() < 0.85:
        artifacts = tuple(
            writer.put_artifact(f"{i}-{k}".encode(), media_type="text/plain", role="log", name="l")
            for k in range(rng.choice((1, 1, 2)))
        )
    zone = rng.choice((UTC, UTC, timezone(timedelta(hours=2))))
    at = (T0 + timedelta(minutes=rng.randrange(40))).astimezone(zone)
    current = CURRENT[gate]
    return GateResult(
        result_id=f"r{writer.run_id[-6:]}-{i}", run_id=writer.run_id, gate_id=gate,
        gate_version=rng.choice((current.version,) * 5 + (current.version + 1,)),
        gate_kind="test",
        gate_spec_sha256=rng.choice((current.spec_sha256,) * 5 + (None, "0" * 64, "")),
        row=rng.choice([*keys, "model=other;task=t0"]), outcome=outcome,
        reasons=tuple(f"reason {k}" for k in range(rng.choice((0, 0, 1, 2, 5)))),
        limitations=rng.choice(((),) * 6 + (("negative_prompt ignored",), ("a", "b"))),
        startup_only=rng.random() < 0.05, target="test", artifacts=artifacts,
        provenance=Provenance(
            vllm_omni_version=rng.choice(("0.30.0",) * 8 + ("0.29.0", "unknown", None)),
            checkpoint_sha256=rng.choice(("a" * 64,) * 6 + ("b" * 64, "unknown")),
        ),
        started_at=at, finished_at=at,
    )  # fmt: skip


def record_mixed(root: Path, matrix: LoadedMatrix, *, runs: int = 3, per_run: int = 150) -> None:
    rng = random.Random(7)
    keys = [str(row.key) for row in matrix.rows]
    for run in range(runs):
        writer = RunWriter.create(root, command=("omniqual",), environment=FINGERPRINT,
                                  run_id=f"run-{run}")  # fmt: skip
        for i in range(per_run):
            writer.record(_result(writer, rng, keys, i))
        if run < runs - 1:
            writer.finish("completed")
        else:
            writer.close()  # unfinished: no digest until compile rebuilds one


def compiled_both_ways(root: Path, matrix: LoadedMatrix) -> tuple[CompiledMatrix, CompiledMatrix]:
    now = datetime(2026, 2, 1, tzinfo=UTC)
    via_journal = compile_matrix(matrix, CURRENT, collect_results([root], root), now=now)
    via_digest = compile_digests(matrix, CURRENT, collect_digests([root], root), now=now)
    return via_journal, via_digest


def test_compile_from_digests_equals_compile_from_journals(tmp_path: Path) -> None:
    matrix = mixed_matrix()
    record_mixed(tmp_path, matrix)
    assert not (tmp_path / "run-2" / DIGEST_NAME).exists()
    via_journal, via_digest = compiled_both_ways(tmp_path, matrix)
    assert via_digest == via_journal
    assert (tmp_path / "run-2" / DIGEST_NAME).exists()  # rebuilt and cached
    states = {row.state for row in via_journal.rows}
    assert len(states) >= 3, "the fixture must exercise several states"


def test_crowded_rows_are_derived_one_by_one_and_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    matrix = mixed_matrix(8)
    record_mixed(tmp_path, matrix, per_run=120)
    monkeypatch.setattr(compile_classes, "MAX_HELD", 2)
    via_journal, via_digest = compiled_both_ways(tmp_path, matrix)
    assert via_digest == via_journal


def test_no_runs_compile_to_an_untested_matrix(tmp_path: Path) -> None:
    matrix = mixed_matrix(4)
    via_journal, via_digest = compiled_both_ways(tmp_path, matrix)
    assert via_digest == via_journal


def test_rows_alike_but_for_the_order_of_their_times_derive_apart(tmp_path: Path) -> None:
    """Classes of rows must tell apart which of two results of a gate is the later one."""
    matrix = mixed_matrix(2)
    first, second = (str(row.key) for row in matrix.rows)
    writer = RunWriter.create(tmp_path, command=("omniqual",), environment=FINGERPRINT,
                              run_id="run-order")  # fmt: skip
    artifact = writer.put_artifact(b"log", media_type="text/plain", role="log", name="l")
    for i, (row, minute, outcome, checkpoint) in enumerate([
        (first, 1, GateOutcome.PASSED, "a"), (first, 2, GateOutcome.FAILED, "b"),
        (second, 2, GateOutcome.PASSED, "a"), (second, 1, GateOutcome.FAILED, "b"),
    ]):  # fmt: skip
        at = T0 + timedelta(minutes=minute)
        writer.record(GateResult(
            result_id=f"id-{i}", run_id=writer.run_id, gate_id="contract", gate_version=1,
            gate_kind="test", gate_spec_sha256="c" * 64, row=row, outcome=outcome,
            target="test", artifacts=(artifact,),
            provenance=Provenance(vllm_omni_version="0.30.0", checkpoint_sha256=checkpoint * 64),
            started_at=at, finished_at=at,
        ))  # fmt: skip
    writer.finish("completed")
    matrix = LoadedMatrix(matrix.definition, matrix.catalog,
                          tuple(PlannedRow(r.key, SPECS[1], None) for r in matrix.rows),
                          matrix.path)  # fmt: skip
    via_journal, via_digest = compiled_both_ways(tmp_path, matrix)
    assert via_digest == via_journal
    outcomes = [row.gate_outcomes["contract"] for row in via_digest.rows]
    assert outcomes == ["failed", "passed"]


def test_unvalidated_records_equal_validated_ones_and_dump_the_same() -> None:
    from omniqual.compile.construct import constructor
    from omniqual.domain.matrix import CompiledRow, EvidenceRef

    ref = {"run_id": "r", "result_id": "i", "gate_id": "g", "outcome": "passed",
           "artifacts": ("a" * 64,), "link": "runs/r/journal.jsonl#i"}  # fmt: skip
    make_ref = constructor(EvidenceRef, ref)
    assert make_ref.__name__ == "make"  # the fast path, not model_construct
    row = {"key": "model=m", "axes": {"model": "m"}, "state": CellState.LIMITED,
           "reasons": ("limitation: x",), "required_gates": ("g",), "limitation": "x",
           "evidence": (make_ref(**ref),), "gate_outcomes": {"g": "passed"}, "declared": None,
           "note": "n", "stale": 2}  # fmt: skip
    ours = constructor(CompiledRow, row)(**row)
    theirs = CompiledRow(**row)
    assert ours == theirs
    assert ours.model_dump_json() == theirs.model_dump_json()
