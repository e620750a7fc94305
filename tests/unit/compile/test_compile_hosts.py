"""A result measured on one host never lands on a row of another hardware class: the compiler
holds the row's ``hardware`` against the run's fingerprint (where the target ran on that host),
on both compile paths, and the row's reasons say why results were set aside."""

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from omniqual.compile.classes import compile_digests
from omniqual.compile.collect import collect_digests, collect_results
from omniqual.compile.matrix import compile_matrix
from omniqual.domain.matrix import CompiledRow
from omniqual.domain.outcomes import CellState
from omniqual.domain.outcomes import GateOutcome as O
from omniqual.domain.provenance import HARNESS_HOST, NOT_VISIBLE, Provenance
from omniqual.domain.run import EnvironmentFingerprint, GpuInfo
from omniqual.engine.matrix_service import ProjectMatrix, load_project_matrix
from omniqual.evidence.store import RunWriter
from tests.fakes.evidence import FINGERPRINT, result

MINI = Path(__file__).resolve().parents[2] / "data" / "mini-project"
NOW = datetime(2026, 2, 1, tzinfo=UTC)
H200 = FINGERPRINT.model_copy(update={"gpus": (
    GpuInfo(index=0, name="NVIDIA H200", memory_total_bytes=141 << 30),)})  # fmt: skip
ARM = FINGERPRINT.model_copy(update={"machine": "aarch64"})


def project(tmp_path: Path, hardware: str) -> ProjectMatrix:
    root = tmp_path / "project"
    shutil.copytree(MINI, root)
    (root / "gates" / "contracts").mkdir()
    (root / "gates" / "contracts" / "m.yaml").write_text("model: m\nmax_n: 4\n")
    matrix = root / "matrices" / "mini.yaml"
    text = matrix.read_text().replace(
        "defaults: {hardware: cpu}", f"defaults: {{hardware: {hardware}}}"
    )
    matrix.write_text(text)
    return load_project_matrix(matrix)


def record(runs: Path, loaded: ProjectMatrix, host: EnvironmentFingerprint, where: str) -> None:
    """contract and load passing on the t2i row, measured on ``host`` (target ``where``)."""
    row = next(str(r.key) for r in loaded.matrix.rows if r.key.get("quantization") == "none"
               and r.key.get("task") == "t2i")  # fmt: skip
    # A launch is named by its serve config, a URL deployment by its served identity.
    named = "serve_config_sha256" if where == HARNESS_HOST else "served_identity_sha256"
    provenance = Provenance(vllm_omni_version="0.30.0", target_host=where, **{named: "5" * 64})
    with RunWriter.create(runs, command=("omniqual",), environment=host) as writer:
        for minute, gate in enumerate(("contract", "load")):
            base = result(writer, gate, row, O.PASSED, minute=minute, provenance=provenance)
            writer.record(base.model_copy(update={"gate_spec_sha256": loaded.gates[gate].sha256}))


def t2i_row(loaded: ProjectMatrix, runs: Path) -> CompiledRow:
    """The row compiled both ways, which must agree."""
    current = loaded.current_gates()
    via_journal = compile_matrix(loaded.matrix, current, collect_results([runs], runs), now=NOW)
    via_digest = compile_digests(loaded.matrix, current, collect_digests([runs], runs), now=NOW)
    assert via_digest == via_journal
    return next(r for r in via_digest.rows if "quantization=none" in r.key and "t2i" in r.key)


@pytest.mark.parametrize(
    ("hardware", "host", "why"),
    [
        ("1x-h200-141gb", FINGERPRINT,
         "measured on x86_64 with no GPU recorded, not 1x-h200-141gb"),
        ("cpu-x86_64-2core-avx2", ARM,
         "measured on aarch64 with no GPU recorded, not cpu-x86_64-2core-avx2"),
    ],
)  # fmt: skip
def test_evidence_of_another_host_class_is_not_counted(
    tmp_path: Path, hardware: str, host: EnvironmentFingerprint, why: str
) -> None:
    loaded = project(tmp_path, hardware)
    record(tmp_path / "runs", loaded, host, HARNESS_HOST)
    row = t2i_row(loaded, tmp_path / "runs")
    assert row.state is CellState.NOT_TESTED
    assert f"2 result(s) not counted for this row: {why}" in row.reasons
    assert row.evidence == ()


@pytest.mark.parametrize(
    ("hardware", "host", "where"),
    [
        ("cpu-x86_64-2core-avx2", FINGERPRINT, HARNESS_HOST),  # the embedded class
        ("cpu-x86_64-2core-avx2", H200, HARNESS_HOST),  # served on the CPU of a GPU host
        ("1x-h200-141gb", H200, HARNESS_HOST),
        # A URL target's host is not the harness's: nothing is known, nothing contradicts.
        ("1x-h200-141gb", FINGERPRINT, NOT_VISIBLE),
    ],
)
def test_evidence_that_may_be_of_the_class_counts(
    tmp_path: Path, hardware: str, host: EnvironmentFingerprint, where: str
) -> None:
    loaded = project(tmp_path, hardware)
    record(tmp_path / "runs", loaded, host, where)
    row = t2i_row(loaded, tmp_path / "runs")
    assert row.state is CellState.VALIDATED, row.reasons
    assert not any("not counted" in r for r in row.reasons)
