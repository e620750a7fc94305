"""Compiling from recorded runs counts only evidence of the row's own checkpoint, server and
spec content, and turns reproduced contract deviations into `limited`."""

import json
import shutil
from collections.abc import Iterable
from pathlib import Path

from omniqual.compile.matrix import LocatedResult, compile_matrix
from omniqual.domain.matrix import CompiledRow
from omniqual.domain.outcomes import CellState
from omniqual.domain.outcomes import GateOutcome as O
from omniqual.domain.provenance import Provenance
from omniqual.domain.result import GateResult
from omniqual.engine.matrix_service import ProjectMatrix, compile_from_dirs, load_project_matrix
from omniqual.evidence.store import RunWriter
from tests.fakes.evidence import FINGERPRINT, result

MINI = Path(__file__).resolve().parents[2] / "data" / "mini-project"
BASE = "model=m;task=t2i;quantization=none;hardware=cpu"
AT_A = Provenance(checkpoint_sha256="a" * 64, vllm_omni_version="0.30.0")
AT_B = Provenance(checkpoint_sha256="b" * 64, vllm_omni_version="0.30.0")
NOTHING_KNOWN = Provenance()  # what URL and command recipes recorded


def project(tmp_path: Path) -> ProjectMatrix:
    root = tmp_path / "project"
    shutil.copytree(MINI, root)
    (root / "gates" / "contracts").mkdir()
    (root / "gates" / "contracts" / "m.yaml").write_text("model: m\nmax_n: 4\n")
    return load_project_matrix(root / "matrices" / "mini.yaml")


def record(
    runs: Path, loaded: ProjectMatrix, entries: Iterable[tuple[str, O, dict[str, object]]]
) -> list[GateResult]:
    """One run; each entry is (gate, outcome, fields to set), recorded with the current spec
    hash unless the fields say otherwise."""
    recorded = []
    with RunWriter.create(runs, command=("omniqual",), environment=FINGERPRINT) as writer:
        for minute, (gate, outcome, fields) in enumerate(entries):
            base = result(writer, gate, BASE, outcome, minute=minute)
            update = {"gate_spec_sha256": loaded.gates[gate].sha256, **fields}
            recorded.append(base.model_copy(update=update))
            writer.record(recorded[-1])
    return recorded


def base_row(loaded: ProjectMatrix, runs: Path) -> CompiledRow:
    compiled = compile_from_dirs(loaded, [runs], None)
    return next(r for r in compiled.rows if r.key == BASE)


def test_passes_on_different_checkpoints_do_not_validate(tmp_path: Path) -> None:
    loaded = project(tmp_path)
    # The newest result knows no revision: it must not unpin the row and let A combine with it.
    entries = [("contract", O.PASSED, {"provenance": AT_A}),
               ("load", O.PASSED, {"provenance": NOTHING_KNOWN})]  # fmt: skip
    record(tmp_path / "runs", loaded, entries)
    row = base_row(loaded, tmp_path / "runs")
    assert row.state is CellState.NOT_TESTED
    assert row.reasons[0].startswith("evidence from different checkpoints/servers: ")
    assert "contract (checkpoint_sha256=aaaaaaaaaaaaaaaa" in row.reasons[0]
    assert "load (checkpoint_sha256=unknown" in row.reasons[0]


def test_known_checkpoints_never_mix_either(tmp_path: Path) -> None:
    loaded = project(tmp_path)
    record(tmp_path / "runs", loaded, [("load", O.PASSED, {"provenance": AT_B}),
                                       ("contract", O.PASSED, {"provenance": AT_A})])  # fmt: skip
    assert base_row(loaded, tmp_path / "runs").state is CellState.NOT_TESTED
    record(tmp_path / "runs", loaded, [("load", O.PASSED, {"provenance": AT_A})])
    assert base_row(loaded, tmp_path / "runs").state is CellState.VALIDATED


def test_an_edited_contract_makes_old_passes_stale(tmp_path: Path) -> None:
    loaded = project(tmp_path)
    record(tmp_path / "runs", loaded, [("contract", O.PASSED, {}), ("load", O.PASSED, {})])
    assert base_row(loaded, tmp_path / "runs").state is CellState.VALIDATED
    contract = loaded.project.gates / "contracts" / "m.yaml"
    contract.write_text("model: m\nmax_n: 8\n")
    edited = load_project_matrix(loaded.matrix.path)
    row = base_row(edited, tmp_path / "runs")
    assert row.state is CellState.NOT_TESTED
    assert row.stale == 1
    assert any(
        r.startswith("1 result(s) ignored as stale (gate spec, contract or mapping changed since)"
                     ": contract gate_spec_sha256: current ")
        for r in row.reasons
    )  # fmt: skip


def test_an_edited_threshold_makes_old_passes_stale(tmp_path: Path) -> None:
    loaded = project(tmp_path)
    record(tmp_path / "runs", loaded, [("contract", O.PASSED, {}), ("load", O.PASSED, {})])
    gate = loaded.project.gates / "load.yaml"
    gate.write_text(gate.read_text() + "params:\n  max_reasons: 5\n")  # same version number
    row = base_row(load_project_matrix(loaded.matrix.path), tmp_path / "runs")
    assert row.state is CellState.NOT_TESTED
    assert row.stale == 1


def test_a_contract_default_directory_is_hashed_too(tmp_path: Path) -> None:
    loaded = project(tmp_path)  # contract.yaml leaves contracts_dir at the check's default
    assert loaded.gates["contract"].inputs == ((loaded.project.gates / "contracts").resolve(),)
    assert loaded.gates["ff"].inputs == ()


def test_reproduced_deviations_compile_to_limited_with_their_evidence(tmp_path: Path) -> None:
    loaded = project(tmp_path)
    deviation = "n=0 is accepted (declared deviation, vLLM-Omni 0.30)"
    record(tmp_path / "runs", loaded, [("contract", O.PASSED, {"limitations": (deviation,)}),
                                       ("load", O.PASSED, {})])  # fmt: skip
    row = base_row(loaded, tmp_path / "runs")
    assert row.state is CellState.LIMITED
    assert row.limitation == deviation
    assert row.reasons[0] == f"limitation: {deviation}"
    assert {e.gate_id for e in row.evidence} == {"contract", "load"}


def test_digest_and_full_results_compile_alike(tmp_path: Path) -> None:
    loaded = project(tmp_path)
    recorded = record(tmp_path / "runs", loaded, [
        ("contract", O.PASSED, {"limitations": ("x",), "provenance": AT_A}),
        ("load", O.PASSED, {"provenance": AT_A}),
        ("load", O.PASSED, {"provenance": AT_B, "gate_spec_sha256": "old"}),
    ])  # fmt: skip
    from_digests = base_row(loaded, tmp_path / "runs")
    full = compile_matrix(
        loaded.matrix, loaded.current_gates(),
        [LocatedResult(r, f"{tmp_path / 'runs'}/x#{r.result_id}") for r in recorded],
    )  # fmt: skip
    from_results = next(r for r in full.rows if r.key == BASE)
    assert from_digests.state is from_results.state is CellState.LIMITED
    assert from_digests.reasons == from_results.reasons
    assert from_digests.stale == from_results.stale == 1


def test_an_old_startup_only_record_is_not_evidence(tmp_path: Path) -> None:
    loaded = project(tmp_path)
    record(tmp_path / "runs", loaded, [("contract", O.PASSED, {"startup_only": True}),
                                       ("load", O.PASSED, {})])  # fmt: skip
    row = base_row(loaded, tmp_path / "runs")
    assert row.state is CellState.NOT_TESTED
    assert row.gate_outcomes["contract"] == "skipped"


def test_records_of_the_first_format_still_compile(tmp_path: Path) -> None:
    loaded = project(tmp_path)
    record(tmp_path / "runs", loaded, [("contract", O.PASSED, {}), ("load", O.PASSED, {})])
    journal = next((tmp_path / "runs").glob("*/journal.jsonl"))
    lines = []
    for raw in journal.read_text().splitlines():
        doc = json.loads(raw)
        if doc["kind"] == "result":  # as the first landing wrote a launch's results
            for key in ("limitations", "gate_spec_sha256"):
                doc["result"].pop(key)
            doc["result"]["provenance"] = {"vllm_omni_version": "0.30.0",
                                           "checkpoint_sha256": "a" * 64}  # fmt: skip
        lines.append(json.dumps(doc, sort_keys=True) + "\n")
    journal.write_text("".join(lines))
    for name in ("anchor.json", "digest.npz"):  # that omniqual anchored none of these bytes
        (journal.parent / name).unlink()
    row = base_row(loaded, tmp_path / "runs")
    assert row.state is CellState.VALIDATED
    assert "2 result(s) without a recorded spec hash, judged by gate version only" in row.reasons
