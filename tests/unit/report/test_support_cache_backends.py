"""The TeaCache cell of SD3's feature table stands on the project's tea_cache row: compiled by
the real compiler from the shipped matrix, a proven refusal of that row makes the cell ❌ quoting
it, a refusal that names nothing leaves it ❓ naming the failure, and nothing recorded leaves it
❓ without a note (the row's absence of evidence decides nothing)."""

from datetime import UTC, datetime
from pathlib import Path

from omniqual.compile.matrix import LocatedResult, compile_matrix
from omniqual.domain.matrix import CompiledMatrix
from omniqual.domain.outcomes import CellState
from omniqual.domain.outcomes import GateOutcome as O
from omniqual.domain.provenance import Provenance
from omniqual.engine.matrix_service import load_project_matrix
from omniqual.evidence.store import RunWriter
from omniqual.report.support_cells import FeatureCell
from omniqual.report.support_tables import model_support_table
from omniqual.specs.feature_tables import load_feature_tables
from tests.fakes.evidence import FINGERPRINT, result

ROOT = Path(__file__).resolve().parents[3]
HW = "cpu-x86_64-2core-avx2"
KEY = (
    "model=sd3-tiny;task=t2i;api_mode=images-generations;execution=serial/1;"
    "shape_schedule=default;attention_backend=sdpa;packed_layout=padded;cache_policy={cache};"
    "quantization=none;offload=resident;topology=1-device;hardware=cpu-x86_64-2core-avx2;"
    "dtype=bf16;output_transport=b64-json"
)
AT = Provenance(vllm_omni_version="0.30.0", checkpoint_sha256="c" * 64,
                serve_config_sha256="e" * 64, source="launched")  # fmt: skip
REFUSAL = "refused twice at startup: Cannot find coefficients for SD3Transformer2DModel"


def compiled(tmp_path: Path, recorded: list[tuple[str, str, O, tuple[str, ...]]]) -> CompiledMatrix:
    loaded = load_project_matrix(ROOT / "matrices" / "embedded-cpu.yaml")
    writer = RunWriter.create(tmp_path, command=("omniqual",), environment=FINGERPRINT,
                              run_id="run-tea")  # fmt: skip
    current = loaded.current_gates()
    located = []
    for i, (gate, row, outcome, reasons) in enumerate(recorded):
        made = result(writer, gate, row, outcome, provenance=AT, reasons=reasons)
        made = made.model_copy(update={
            "result_id": f"result-{i}", "gate_version": current[gate].version,
            "gate_spec_sha256": current[gate].spec_sha256,
        })  # fmt: skip
        located.append(LocatedResult(made, f"runs/run-tea/journal.jsonl#{made.result_id}"))
    return compile_matrix(loaded.matrix, current, located, now=datetime(2026, 1, 1, tzinfo=UTC))


def tea_cache_cell(matrix: CompiledMatrix) -> FeatureCell:
    mapping = load_feature_tables(ROOT / "matrices" / "vllm-omni-features.yaml")
    table = model_support_table(matrix, mapping, "sd3-tiny", HW)
    return next(c for c in table.sections[0].cells if c.column == "⚡TeaCache")


PARENT = ("reference-parity", KEY.format(cache="none"), O.PASSED, ())


def test_a_proven_refusal_of_the_tea_cache_row_makes_the_cell_refused(tmp_path: Path) -> None:
    tea = KEY.format(cache="tea_cache")
    cell = tea_cache_cell(compiled(tmp_path, [PARENT, ("fails-fast", tea, O.PASSED, (REFUSAL,))]))
    assert cell.state is CellState.UNSUPPORTED and cell.symbol == "❌"
    assert cell.row_key == tea and cell.covering == 1
    assert cell.link == "runs/run-tea/journal.jsonl#result-1"
    assert "TeaCache coefficients" in cell.note  # the row's own note, beside the refusal


def test_a_refusal_naming_nothing_leaves_the_cell_unverified(tmp_path: Path) -> None:
    tea = KEY.format(cache="tea_cache")
    failed = ("fails-fast", tea, O.FAILED, ("sd3-tiny-tea-cache crashed naming nothing",))
    cell = tea_cache_cell(compiled(tmp_path, [PARENT, failed]))
    assert cell.state is CellState.NOT_TESTED and cell.failed_gates == ("fails-fast",)
    assert cell.note.startswith("not verified:") and "crashed naming nothing" in cell.note


def test_nothing_recorded_on_the_tea_cache_row_decides_nothing(tmp_path: Path) -> None:
    cell = tea_cache_cell(compiled(tmp_path, [PARENT]))
    assert cell.state is CellState.NOT_TESTED and cell.note == "" and cell.link == ""
    assert cell.covering == 1  # the row is there; it only has no evidence yet
