"""Golden file of the project's own example matrix (matrices/embedded-cpu.yaml), compiled from a
fixed set of recorded results, so a change to the matrix, the rule table or the renderer shows
up as a readable diff. Regenerate with ``OMNIQUAL_UPDATE_GOLDEN=1 .venv/bin/pytest tests/golden``:
that run rewrites what changed and fails with the diff, to be reviewed and committed before a
run without the variable passes (see golden_files).
"""

from datetime import UTC, datetime
from pathlib import Path

from omniqual.compile.matrix import LocatedResult, compile_matrix
from omniqual.domain.outcomes import GateOutcome as O
from omniqual.domain.provenance import Provenance
from omniqual.engine.matrix_service import load_project_matrix
from omniqual.evidence.store import RunWriter
from omniqual.report.render import render_matrix
from tests.fakes.evidence import FINGERPRINT, result
from tests.golden.golden_files import assert_matches_golden

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "embedded-cpu"
SD3 = (
    "model=sd3-tiny;task=t2i;api_mode=images-generations;execution={ex};shape_schedule=default;"
    "attention_backend=sdpa;packed_layout=padded;cache_policy=none;quantization={q};"
    "offload={off};topology=1-device;hardware=cpu-x86_64-2core-avx2;dtype=bf16;"
    "output_transport=b64-json"
)
BASE = SD3.format(ex="serial/1", q="none", off="resident")
QWEN = (
    "model=qwen-image-tiny;task=t2i;api_mode=images-generations;execution=serial/1;"
    "shape_schedule=default;attention_backend=sdpa;packed_layout=padded;cache_policy=none;"
    "quantization=none;offload=resident;topology=1-device;hardware=cpu-x86_64-2core-avx2;dtype=bf16;"
    "output_transport=b64-json"
)
DEVIATION = "negative_prompt='' accepted (declared deviation of vLLM-Omni 0.30)"
STEP = SD3.format(ex="step/1", q="none", off="resident")
FP8 = SD3.format(ex="serial/1", q="fp8-online-dit", off="resident")


def test_embedded_matrix_renders_as_recorded(tmp_path: Path) -> None:
    loaded = load_project_matrix(ROOT / "matrices" / "embedded-cpu.yaml")
    # As a launch of the embedded recipe records it: its checkpoint and serve config name it.
    at = Provenance(vllm_omni_version="0.30.0", checkpoint_sha256="c" * 64,
                    serve_config_sha256="e" * 64, source="launched")  # fmt: skip
    writer = RunWriter.create(tmp_path, command=("omniqual",), environment=FINGERPRINT,
                              run_id="run-golden")  # fmt: skip
    recorded = [
        result(writer, "api-contract", BASE, O.PASSED, provenance=at),
        result(writer, "strict-load", BASE, O.PASSED, provenance=at),
        result(writer, "reference-parity", BASE, O.PASSED, provenance=at),
        result(writer, "abort", BASE, O.PASSED, provenance=at),
        result(writer, "soak", BASE, O.PASSED, provenance=at),
        result(writer, "offload-sweep", BASE, O.PASSED, provenance=at),
        result(writer, "fails-fast", STEP, O.PASSED, provenance=at),
        result(writer, "fails-fast", FP8, O.FAILED, reasons=("it served",), provenance=at),
        result(writer, "api-contract", QWEN, O.PASSED, provenance=at).model_copy(
            update={"limitations": (DEVIATION,)}
        ),
        result(writer, "strict-load", QWEN, O.PASSED, provenance=at),
        result(writer, "abort", QWEN, O.PASSED, provenance=at),
        result(writer, "soak", QWEN, O.PASSED, provenance=at),
        result(writer, "reference-parity", QWEN, O.PASSED, provenance=at),
        result(writer, "isolation", BASE, O.PASSED, provenance=at),
        result(writer, "isolation", QWEN, O.PASSED, provenance=at),
        result(writer, "fault-injection", BASE, O.PASSED, provenance=at),
        result(writer, "fault-injection", QWEN, O.PASSED, provenance=at),
        result(writer, "perf", BASE, O.PASSED, provenance=at),
        result(writer, "startup", BASE, O.PASSED, provenance=at),
        result(writer, "field-effect", BASE, O.PASSED, provenance=at),
        result(writer, "startup", QWEN, O.PASSED, provenance=at),
        result(writer, "offline-parity", BASE, O.PASSED, provenance=at),
        result(writer, "lora", BASE, O.PASSED, provenance=at),
    ]
    # Result ids are random; the golden file pins them so links stay stable.
    current = loaded.current_gates()
    pinned = [
        r.model_copy(
            update={
                "result_id": f"result-{i}",
                "gate_version": current[r.gate_id].version,
                "gate_spec_sha256": current[r.gate_id].spec_sha256,
            }
        )
        for i, r in enumerate(recorded)
    ]
    located = [LocatedResult(r, f"runs/run-golden/journal.jsonl#{r.result_id}") for r in pinned]
    compiled = compile_matrix(loaded.matrix, current, located, now=datetime(2026, 1, 1, tzinfo=UTC))
    states = {row.key: row.state.value for row in compiled.rows}
    assert states[BASE] == "validated"
    assert states[STEP] == "unsupported"
    assert states[FP8] == "not tested"
    # A row whose gates pass while reproducing a declared contract deviation is `limited`.
    assert states[QWEN] == "limited"
    qwen = next(row for row in compiled.rows if row.key == QWEN)
    assert qwen.limitation == DEVIATION
    for fmt in ("md", "html"):
        assert_matches_golden(GOLDEN / f"matrix.{fmt}", render_matrix(compiled, fmt))
