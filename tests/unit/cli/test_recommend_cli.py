"""``omniqual recommend`` as a user runs it: the matrix compiled from the evidence as
``omniqual matrix compile`` does, and a row named only in the state it shows there."""

from pathlib import Path

from typer.testing import CliRunner

from omniqual.cli.main import app
from omniqual.engine.matrix_service import load_project_matrix
from omniqual.evidence.store import RunWriter
from tests.fakes.evidence import FINGERPRINT
from tests.unit.compile.deployments import BASELINE_GATES, KINDS, A, B, Recorder

GATES = (*BASELINE_GATES, "api-contract", "strict-load")
AXES = """schema_version: 1
axes:
  - {name: model, open_ended: true, description: model}
  - {name: quantization, open_ended: true, description: quantization}
  - {name: hardware, open_ended: true, description: hardware}
"""
REQUIRES = ", ".join(GATES)
MATRIX = f"""name: rec
defaults: {{hardware: cpu}}
rows:
  - key: {{model: sd3, quantization: bf16}}
    recipe: sd3-launched
    requires: [{REQUIRES}]
  - key: {{model: sd3, quantization: batch}}
    recipe: sd3-batch
    requires: [{REQUIRES}]
"""
LAUNCHED = "model=sd3;quantization=bf16;hardware=cpu"
BATCH = "model=sd3;quantization=batch;hardware=cpu"


def project(root: Path) -> Path:
    (root / "matrices").mkdir(parents=True)
    (root / "gates").mkdir()
    (root / "matrices" / "axes.yaml").write_text(AXES)
    (root / "matrices" / "rec.yaml").write_text(MATRIX)
    for gate in GATES:
        (root / "gates" / f"{gate}.yaml").write_text(
            f"id: {gate}\nkind: {KINDS[gate]}\nversion: 1\ntitle: {gate}\n"
        )
    return root / "matrices" / "rec.yaml"


def test_a_row_whose_passes_are_of_two_deployments_is_never_named(tmp_path: Path) -> None:
    matrix = project(tmp_path / "project")
    loaded = load_project_matrix(matrix)
    record = Recorder()
    record.passes(LAUNCHED, GATES, at=A, latency=0.5)
    # Faster on paper: its benchmark and soak measured another deployment.
    record.passes(BATCH, GATES[:4] + GATES[6:], at=A)
    record.passes(BATCH, ("perf", "soak"), at=B, latency=0.1)
    with RunWriter.create(tmp_path / "runs", command=("omniqual",),
                          environment=FINGERPRINT) as writer:  # fmt: skip
        for made in record.results:
            log = writer.put_artifact(made.result_id.encode(), media_type="text/plain",
                                      role="log", name=made.gate_id)  # fmt: skip
            writer.record(made.model_copy(update={
                "run_id": writer.run_id, "artifacts": (log,),
                "gate_spec_sha256": loaded.gates[made.gate_id].sha256}))  # fmt: skip
    result = CliRunner().invoke(app, ["recommend", str(matrix), "--evidence",
                                      str(tmp_path / "runs")])  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[:4] == ["objective: latency (1 eligible of 2 rows)", f"best: {LAUNCHED}",
                         "  state: validated", "  recipe: sd3-launched"]  # fmt: skip
    assert any(line.startswith(f"not eligible: {BATCH}: the compiled matrix has it not tested: ")
               for line in lines)  # fmt: skip
