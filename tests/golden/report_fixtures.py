"""Deterministic records for the report golden files: one matrix with every state, one run.

Built in code (not loaded from disk) so a domain-model change shows up as a type error here
first, and every timestamp is fixed so renders are byte-stable.
"""

from datetime import UTC, datetime, timedelta
from pathlib import Path

from omniqual.domain.evidence import Artifact, CaseResult, ErrorInfo, Measurement
from omniqual.domain.matrix import CompiledMatrix, CompiledRow, EvidenceRef
from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.domain.provenance import Provenance
from omniqual.domain.result import GateResult
from omniqual.domain.run import EnvironmentFingerprint, GpuInfo, RunSummary
from omniqual.report.run_views import RunEvidence

T0 = datetime(2025, 3, 4, 12, 0, 0, tzinfo=UTC)
RUN = "run-20250304-a"

AXES = (
    "model", "task", "api_mode", "execution", "shape", "attention", "layout", "cache",
    "quantization", "offload", "topology", "hardware", "dtype", "output",
)  # fmt: skip
BASE = {
    "model": "flux-dev",
    "task": "t2i",
    "api_mode": "images-generations",
    "execution": "serial/1",
    "shape": "1024x1024/28steps",
    "attention": "sdpa",
    "layout": "padded",
    "cache": "none",
    "quantization": "bf16",
    "offload": "resident",
    "topology": "1-device",
    "hardware": "1x H200 141GB",
    "dtype": "bf16",
    "output": "b64_json",
}
PROVENANCE = Provenance(
    model="black-forest-labs/FLUX.1-dev",
    model_revision="0ef5fff",
    checkpoint_sha256="c" * 64,
    vllm_omni_version="0.30.0",
    vllm_omni_commit="1a2b3c4d",
    serve_config_sha256="e" * 64,
    serve_argv=("vllm", "serve", "black-forest-labs/FLUX.1-dev", "--omni", "--api-key", "***"),
    source="launched",
    target_host="harness-host",
    omniqual_version="0.1.0",
)


def sha(n: int) -> str:
    return f"{n:02x}" * 32


def _key(axes: dict[str, str]) -> str:
    return ";".join(f"{a}={axes[a]}" for a in AXES)


def _row(state: CellState, changes: dict[str, str], **fields: object) -> CompiledRow:
    axes = {**BASE, **changes}
    return CompiledRow.model_validate(
        {"key": _key(axes), "axes": axes, "state": state, "reasons": (), **fields}
    )


def _ref(result_id: str, gate: str, outcome: str, *artifacts: str) -> EvidenceRef:
    return EvidenceRef(
        run_id=RUN,
        result_id=result_id,
        gate_id=gate,
        outcome=outcome,
        artifacts=artifacts,
        link=f"../runs/{RUN}/results/{result_id}.json",
    )


def matrix(compiled_at: datetime = T0) -> CompiledMatrix:
    rows = (
        _row(
            CellState.VALIDATED,
            {},
            required_gates=("api-contract", "bf16-parity"),
            evidence=(
                _ref("r-001", "api-contract", "passed", sha(1)),
                _ref("r-002", "bf16-parity", "passed", sha(2), sha(3)),
            ),
            gate_outcomes={"api-contract": "passed", "bf16-parity": "passed"},
        ),
        _row(
            CellState.LIMITED,
            {"quantization": "fp8-online-dit"},
            reasons=("limitation: 1024x1024 only; other sizes are rejected with HTTP 400",),
            limitation="1024x1024 only; other sizes are rejected with HTTP 400",
            required_gates=("fp8-parity",),
            evidence=(_ref("r-003", "fp8-parity", "passed", sha(4)),),
            gate_outcomes={"fp8-parity": "passed"},
        ),
        _row(
            CellState.UNSUPPORTED,
            {"offload": "dlo-allgather", "topology": "hsdp-2"},
            reasons=("rejected at startup: HSDP would double-shard DLO AllGather parameters",),
            required_gates=("hsdp-dlo-fail-fast",),
            evidence=(_ref("r-004", "hsdp-dlo-fail-fast", "passed", sha(5)),),
            gate_outcomes={"hsdp-dlo-fail-fast": "passed"},
        ),
        _row(
            CellState.NOT_TESTED,
            {"cache": "cache-dit-high"},
            reasons=("cache-parity: no usable result", "1 startup-only result(s) never promote"),
            required_gates=("cache-parity",),
            declared=CellState.VALIDATED,
            note="claimed in the model card | needs re-check\nat the target revision",
        ),
        _row(
            CellState.NOT_TESTED,
            {"model": "wan2.2-t2v", "task": "t2v", "api_mode": "videos-async",
             "shape": "832x480/81f/4steps", "output": "mp4"},
            reasons=("load-poisson: latest result failed (p95 latency 41200.0 ms > 30000.0 ms)",),
            required_gates=("load-poisson",),
            evidence=(_ref("r-006", "load-poisson", "failed", sha(6)),),
            gate_outcomes={"load-poisson": "failed"},
        ),
    )  # fmt: skip
    return CompiledMatrix(
        name="flux-wan-h200",
        title="FLUX.1-dev and Wan2.2 on H200",
        axes=AXES,
        compiled_at=compiled_at,
        evidence_dirs=("runs",),
        runs=(RUN,),
        rows=rows,
    )


def _artifact(n: int, role: str, name: str, media: str = "image/png") -> Artifact:
    return Artifact(sha256=sha(n), size=1000 * n, media_type=media, role=role, name=name)


def _result(
    i: int, gate: str, kind: str, row_changes: dict[str, str], **fields: object
) -> GateResult:
    start = T0 - timedelta(hours=2) + timedelta(minutes=10 * i)
    data = {
        "result_id": f"r-{i:03d}",
        "run_id": RUN,
        "gate_id": gate,
        "gate_version": 1,
        "gate_kind": kind,
        "row": _key({**BASE, **row_changes}),
        "target": "http://127.0.0.1:8091",
        "provenance": PROVENANCE,
        "started_at": start,
        "finished_at": start + timedelta(seconds=42.5),
        **fields,
    }
    return GateResult.model_validate(data)


def results() -> tuple[GateResult, ...]:
    return (
        _result(
            1, "api-contract", "api_contract", {},
            outcome=GateOutcome.PASSED,
            artifacts=(_artifact(1, "case-log", "api-contract-cases.jsonl", "application/json"),),
            cases=(
                CaseResult(id="size-too-large", endpoint="/v1/images/generations", field="size",
                           sent="4096x4096", expected_status="400", observed_status="400",
                           outcome=GateOutcome.PASSED),
                CaseResult(id="n-zero", endpoint="/v1/images/generations", field="n", sent="0",
                           expected_status="400", observed_status="422",
                           outcome=GateOutcome.PASSED, deviation=True,
                           note="release answers 422 for schema errors"),
            ),
        ),
        _result(
            2, "bf16-parity", "parity", {},
            outcome=GateOutcome.PASSED,
            command=("omniqual", "gate", "run", "bf16-parity", "--prompt", "a red fox"),
            requested={"seed": 7, "prompt": "a red fox in snow", "num_inference_steps": 28},
            effective={"seed": 7, "num_inference_steps": 28},
            measurements=(Measurement(name="psnr", value=38.25, unit="dB", samples=4, bound=30.0,
                                      ok=True),),
            artifacts=(_artifact(2, "output-image", "reference-seed7.png"),
                       _artifact(3, "output-image", "candidate-seed7.png")),
        ),
        _result(
            3, "fp8-parity", "fp8_parity", {"quantization": "fp8-online-dit"},
            outcome=GateOutcome.PASSED,
            requested={"quantization": "fp8", "attention_backend": "flash"},
            effective={"quantization": "fp8", "attention_backend": "sdpa"},
            measurements=(Measurement(name="psnr", value=31.5, unit="dB", samples=4, bound=30.0,
                                      ok=True),),
            artifacts=(_artifact(4, "output-image", "fp8-seed7.png"),),
        ),
        _result(
            4, "hsdp-dlo-fail-fast", "fails_fast",
            {"offload": "dlo-allgather", "topology": "hsdp-2"},
            outcome=GateOutcome.PASSED,
            command=("vllm", "serve", "black-forest-labs/FLUX.1-dev", "--omni", "--hsdp", "2"),
            artifacts=(_artifact(5, "server-log", "fail-fast-stderr.log", "text/plain"),),
            measurements=(Measurement(name="time_to_exit", value=3.2, unit="s", bound=60.0,
                                      ok=True),),
        ),
        _result(
            5, "abort-mid-denoise", "abort", {},
            outcome=GateOutcome.ERRORED,
            reasons=("harness lost the connection before the abort was sent",),
            error=ErrorInfo(type="ConnectError", message="connection refused by 127.0.0.1:8091",
                            traceback="Traceback (most recent call last): ..."),
        ),
        _result(
            6, "load-poisson", "load",
            {"model": "wan2.2-t2v", "task": "t2v", "api_mode": "videos-async",
             "shape": "832x480/81f/4steps", "output": "mp4"},
            outcome=GateOutcome.FAILED,
            reasons=("p95 latency 41200.0 ms > 30000.0 ms",),
            measurements=(
                Measurement(name="latency_p50", value=18250.0, unit="ms", samples=120),
                Measurement(name="latency_p95", value=41200.0, unit="ms", samples=120,
                            bound=30000.0, ok=False),
                Measurement(name="throughput", value=0.0483, unit="req/s", samples=120),
            ),
            artifacts=(_artifact(6, "raw-series", "latencies.json", "application/json"),),
        ),
        _result(
            7, "gpu-probe", "custom_probe", {},
            outcome=GateOutcome.PASSED,
            measurements=(Measurement(name="hbm_peak", value=61.75, unit="GiB"),),
        ),
        _result(
            8, "offload-sweep", "offload_sweep", {},
            outcome=GateOutcome.PASSED,
            effective={"sweep": sweep()},
        ),
    )  # fmt: skip


def _point(
    name: str,
    settings: dict[str, object],
    latency: float | None,
    gib: float | None,
    **fields: object,
) -> dict[str, object]:
    gpu = None if gib is None else {"0": gib * 1024**3}
    point: dict[str, object] = {
        "name": name, "mode": "layer", "settings": settings, "refused": False, "message": None,
        "startup_s": 95.5, "latency_median_s": latency,
        "latency_min_s": None if latency is None else latency - 0.25,
        "latency_max_s": None if latency is None else latency + 0.5, "repetitions": 3,
        "peak_pss_bytes_load": 9.5 * 1024**3, "peak_pss_bytes_steady": 31.25 * 1024**3,
        "peak_rss_bytes": 33.0 * 1024**3, "gpu_bytes_per_device": gpu,
        "memory_bytes": None if gib is None else gib * 1024**3,
        "parity": {"outcome": "passed", "max_abs_error": 0.0, "psnr_db": None, "identical": True},
        "verdict": "valid", "verdict_reasons": [],
    }  # fmt: skip
    point.update(fields)
    return point


def sweep() -> dict[str, object]:
    """A layerwise sweep with a real trade-off: three frontier points, a dominated one, a point
    refused at startup and one whose memory series is missing."""
    return {
        "points": [
            _point("resident", {}, 11.5, 38.0, mode="none", peak_pss_bytes_steady=6.0 * 1024**3),
            _point("layer-r8", {"resident_layers": 8, "pin_memory": True}, 13.75, 24.5),
            _point("layer-r4", {"resident_layers": 4, "pin_memory": True}, 16.0, 17.25),
            _point("layer-r4-nopin", {"resident_layers": 4, "pin_memory": False}, 21.0, 17.25),
            _point("layer-r0", {"resident_layers": 0, "pin_memory": True}, None, None,
                   refused=True, verdict="invalid", parity=None, startup_s=None,
                   repetitions=None, peak_pss_bytes_load=None, peak_pss_bytes_steady=None,
                   peak_rss_bytes=None, message="CUDA out of memory pinning 24.0 GiB host buffer",
                   verdict_reasons=["refused at startup"]),
            _point("model", {"cpu_offload": True}, 29.5, None, mode="model",
                   gpu_bytes_per_device=None, verdict="invalid",
                   verdict_reasons=["memory series missing (NVML gave none)"]),
        ],
        "frontier": ["layer-r4", "layer-r8", "resident"],
        "dominated": {"layer-r4-nopin": "layer-r4"},
        "recommended": "layer-r8",
        "budget_bytes": 32.0 * 1024**3,
        "degenerate": None,
        "memory_note": "Memory is the peak GPU memory NVML attributes to the server's process "
                       "tree, summed over devices.",
    }  # fmt: skip


def run_summary() -> RunSummary:
    env = EnvironmentFingerprint(
        hostname_hash="d" * 64,
        os="Linux",
        kernel="6.8.0",
        machine="x86_64",
        cpu_model="AMD EPYC 9654",
        cpu_count=192,
        memory_total_bytes=2 * 1024**4,
        gpus=(GpuInfo(index=0, name="NVIDIA H200", memory_total_bytes=141 * 1024**3,
                      driver="560.35"),),
        python="3.11.9",
        packages={"vllm": "0.30.0", "vllm-omni": "0.30.0", "torch": "2.13.0"},
        omniqual_version="0.1.0",
        git_commit="feedbeef",
        git_dirty=False,
    )  # fmt: skip
    return RunSummary(
        run_id=RUN,
        started_at=T0 - timedelta(hours=2),
        finished_at=T0 - timedelta(minutes=5),
        status="completed",
        command=("omniqual", "run", "matrices/flux-wan-h200", "--runner", "runners/h200.yaml"),
        environment=env,
        results=results(),
    )


def run_evidence() -> RunEvidence:
    return RunEvidence(
        title="FLUX.1-dev production evidence: t2i on 1x H200",
        matrix=matrix(),
        runs=(run_summary(),),
        scope="t2i and t2v rows on 1x H200 141GB; Day-0 milestone",
        # Relative paths: links are computed between them, never through this machine's paths.
        artifact_dirs=(Path("evidence") / RUN / "artifacts",),
        report_dir=Path("out"),
        gate_kinds={"cache-parity": "candidate_parity", "load-poisson": "load"},
        gate_tracks={"api-contract": "function", "gpu-probe": "performance"},
        full_report="report.html",
    )


BIG_ROWS = 600


def big_run_evidence() -> RunEvidence:
    """A large synthetic matrix (600 rows over models, tasks and variants) with a contract
    result of 20 cases on every row: far beyond one PR comment, to test the fit."""
    variants = [("quantization", q) for q in ("bf16", "fp8-online-dit", "int8")] + [
        ("offload", o) for o in ("resident", "layerwise", "cpu-offload", "dlo-allgather")
    ]
    rows: list[CompiledRow] = []
    results: list[GateResult] = []
    states = tuple(CellState)
    for i in range(BIG_ROWS):
        axis, value = variants[i % len(variants)]
        changes = {"model": f"model-{i // 28:02d}", "task": ("t2i", "t2v")[i // 14 % 2],
                   "api_mode": ("images-generations", "videos-async")[i // 14 % 2],
                   axis: value, "shape": f"{512 + 16 * (i % 2)}x512/{i % 14}steps"}  # fmt: skip
        state = states[i % 4]
        reasons = () if state is CellState.VALIDATED else (f"reason {i}",)
        rows.append(_row(state, changes, required_gates=("api-contract",), reasons=reasons))
        cases = tuple(
            CaseResult(id=f"c{c}", endpoint="/v1/images/generations", field=f"f{c % 12}",
                       sent=str(c), expected_status="400", observed_status="400",
                       outcome=GateOutcome.PASSED)
            for c in range(20)
        )  # fmt: skip
        results.append(_result(i, "api-contract", "api_contract", changes,
                               outcome=GateOutcome.PASSED, cases=cases,
                               result_id=f"big-{i:04d}"))  # fmt: skip
    big = matrix().model_copy(update={"rows": tuple(rows), "name": "big"})
    return RunEvidence(
        title="A large matrix",
        matrix=big,
        results=tuple(results),
        artifact_dirs=(Path("evidence") / RUN / "artifacts",),
        report_dir=Path("out"),
        full_report="report.html",
    )
