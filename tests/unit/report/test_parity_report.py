"""The run report's parity evidence: a real parity outcome (fake servers, artifacts written to a
run directory) renders as side-by-side reference | candidate | difference pictures embedded in
the self-contained HTML page, linked (never embedded) in Markdown, with the summary figures; a
tampered artifact is not shown."""

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path

import yaml

from omniqual.checks.base import CheckContext, ServedReference, TargetInfo
from omniqual.checks.parity.candidate import CandidateParityCheck
from omniqual.checks.parity.candidate_params import CandidateParityParams
from omniqual.client import ClientTimeouts, OmniClient
from omniqual.domain.axes import RowKey
from omniqual.domain.gate import GateSpec
from omniqual.domain.provenance import Provenance
from omniqual.domain.result import GateResult
from omniqual.engine.matrix_service import compile_from_dirs, load_project_matrix
from omniqual.evidence.store import RunWriter
from omniqual.report.render import render_run_report
from omniqual.report.run_views import RunEvidence
from tests.fakes.evidence import FINGERPRINT
from tests.fakes.fake_omni import FakeOmni

ROOT = Path(__file__).resolve().parents[3]
AXES = {"model": "sd3-tiny", "task": "t2i", "api_mode": "images-generations",
        "execution": "serial/1", "shape_schedule": "default", "attention_backend": "sdpa",
        "packed_layout": "padded", "cache_policy": "none", "quantization": "none",
        "offload": "layerwise-nopin", "topology": "1-device", "hardware": "cpu-x86_64-2core-avx2",
        "dtype": "bf16", "output_transport": "b64-json"}  # fmt: skip


def _client(fake: FakeOmni) -> OmniClient:
    return OmniClient("http://fake.invalid", transport=fake.transport(), timeouts=ClientTimeouts())


def parity_result(writer: RunWriter, tmp_path: Path) -> GateResult:
    spec = yaml.safe_load((ROOT / "gates" / "parity.yaml").read_text())
    params = CandidateParityParams.model_validate(spec["params"])
    log = tmp_path / "candidate.log"
    log.write_text("INFO Enabling offloader backend: LayerWiseOffloadBackend\n")
    key = RowKey(tuple(AXES.items()))
    reference, candidate = FakeOmni(), FakeOmni()

    @asynccontextmanager
    async def serve(row: RowKey) -> AsyncIterator[ServedReference]:
        yield ServedReference(row, "sd3-tiny", TargetInfo(url="http://reference.invalid"),
                              lambda: _client(reference))  # fmt: skip

    ctx = CheckContext(
        gate=GateSpec(id="parity", kind="candidate_parity", version=1), row=key,
        target=TargetInfo(url="http://fake.invalid", log_path=log), artifacts=writer,
        project_root=ROOT, make_client=lambda: _client(candidate), serve_reference=serve,
    )  # fmt: skip
    outcome = asyncio.run(CandidateParityCheck().run(ctx, params))
    now = datetime.now(UTC)
    result = GateResult(
        result_id=uuid.uuid4().hex, run_id=writer.run_id, gate_id="parity", gate_version=1,
        gate_kind="candidate_parity", row=str(key), outcome=outcome.outcome,
        reasons=outcome.reasons, target="fake", artifacts=outcome.artifacts,
        measurements=outcome.measurements, cases=outcome.cases, requested=dict(outcome.requested),
        effective=dict(outcome.effective), provenance=Provenance(vllm_omni_version="0.30.0"),
        started_at=now, finished_at=now,
    )  # fmt: skip
    writer.record(result)
    return result


def evidence(tmp_path: Path) -> tuple[RunEvidence, GateResult, Path]:
    runs = tmp_path / "runs"
    writer = RunWriter.create(runs, command=("omniqual", "test"), environment=FINGERPRINT)
    with writer:
        result = parity_result(writer, tmp_path)
    loaded = load_project_matrix(ROOT / "matrices" / "embedded-cpu.yaml")
    compiled = compile_from_dirs(loaded, [runs], None)
    artifacts = writer.run_dir / "artifacts"
    report = RunEvidence("parity", compiled, results=(result,), artifact_dirs=(artifacts,))
    return report, result, artifacts


def _pictures(result: GateResult) -> list[str]:
    pairs = result.effective["parity"]["pairs"]
    return [p["files"][r] for p in pairs for r in ("reference_thumb", "candidate_thumb",
                                                    "difference")]  # fmt: skip


def test_html_embeds_reference_candidate_and_difference_per_case(tmp_path: Path) -> None:
    report, result, _ = evidence(tmp_path)
    html = render_run_report(report, "html")
    assert "Parity outputs: #" in html and "Difference (amplified)" in html
    assert html.count('src="data:image/png;base64,') == len(_pictures(result)) == 18
    assert "images-generations/64x64/p0-s1234" in html
    assert "offloader backend enablement lines = 1" in html
    assert "reference latency (median, min–max, n)" in html and "n=3" in html
    assert "a red cube" not in html, "prompts never reach the report"


def test_markdown_links_the_pictures_and_carries_no_payload(tmp_path: Path) -> None:
    report, result, _ = evidence(tmp_path)
    markdown = render_run_report(report, "md")
    assert "base64" not in markdown
    for digest in _pictures(result):
        # linked as files relative to where the report is read (here: the working directory)
        assert f"/{result.run_id}/artifacts/{digest})" in markdown


def test_a_tampered_picture_is_not_embedded(tmp_path: Path) -> None:
    report, result, artifacts = evidence(tmp_path)
    victim = _pictures(result)[2]
    path = artifacts / victim
    path.chmod(0o644)
    path.write_bytes(b"\x89PNG\r\n\x1a\n not what was hashed")
    html = render_run_report(report, "html")
    assert f"artifact {victim[:12]} not in the evidence directories" in html


def test_reference_parity_results_get_the_gallery_without_serving_figures(tmp_path: Path) -> None:
    report, result, _ = evidence(tmp_path)
    official = result.model_copy(update={"gate_id": "reference-parity",
                                         "gate_kind": "reference_parity"})  # fmt: skip
    report = RunEvidence("parity", report.matrix, results=(official,),
                         artifact_dirs=report.artifact_dirs)  # fmt: skip
    html = render_run_report(report, "html")
    assert "Reference parity: #" in html and "Difference (amplified)" in html
    assert html.count('src="data:image/png;base64,') == 18
    assert "latency" not in html.split("Reference parity: #", 1)[1].split("Parity outputs", 1)[0]
