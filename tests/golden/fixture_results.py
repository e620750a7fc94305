"""The gate results of the golden run, each one a result its gate's judge gives for the
evidence it carries, with its artifacts stored in the run's real evidence store.

Contract cases go through the contract judge (fixture_contract) and the offload sweep through
the sweep check's own verdict (fixture_sweep); the others follow their judges' rules: a parity
or fail-fast result passes only with every bound held, a load result fails on the bound it
broke, an errored result carries the error that stopped it.
"""

import json
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Protocol

from omniqual.domain.evidence import Artifact, ErrorInfo, Measurement
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.provenance import Provenance
from omniqual.domain.result import GateResult
from omniqual.evidence.store import RunWriter
from tests.golden.fixture_contract import N_TOO_MANY, N_ZERO, SIZE_TOO_LARGE, contract_run
from tests.golden.fixture_matrix import FP8, GATES, HSDP, WAN, row_key
from tests.golden.fixture_sweep import judged_sweep


class Put(Protocol):
    def __call__(self, name: str, role: str, media: str = ..., /) -> Artifact: ...


def putter(writer: RunWriter) -> Put:
    """Store a small artifact whose bytes say what it stands for (content-addressed)."""

    def put(name: str, role: str, media: str = "image/png") -> Artifact:
        return writer.put_artifact(f"{role}: {name}".encode(), media_type=media, role=role,
                                   name=name)  # fmt: skip

    return put


def make_result(
    writer: RunWriter, provenance: Provenance, t0: datetime
) -> Callable[..., GateResult]:
    def result(i: int, gate: str, kind: str, row: dict[str, str], **fields: object) -> GateResult:
        start = t0 - timedelta(hours=2) + timedelta(minutes=10 * i)
        current = GATES[gate]
        data = {
            "result_id": f"r-{i:03d}", "run_id": writer.run_id, "gate_id": gate,
            "gate_version": current.version, "gate_spec_sha256": current.spec_sha256,
            "gate_kind": kind, "row": row_key(row), "target": "http://127.0.0.1:8091",
            "provenance": provenance, "started_at": start,
            "finished_at": start + timedelta(seconds=42.5), **fields,
        }  # fmt: skip
        return GateResult.model_validate(data)

    return result


def _contract(result: Callable[..., GateResult], put: Put, i: int, row: dict[str, str],
              answers: dict[str, int]) -> GateResult:  # fmt: skip
    run = contract_run(answers)
    log = put(f"api-contract-cases-{i}.jsonl", "cases", "application/x-ndjson")
    return result(i, "api-contract", "api_contract", row, outcome=run.outcome,
                  reasons=run.reasons, cases=run.cases, limitations=run.limitations,
                  measurements=run.measurements, artifacts=(log,),
                  requested={"model": "flux-dev", "release": "0.30.0",
                             "endpoints": ["images-generations"]})  # fmt: skip


def results(writer: RunWriter, provenance: Provenance, t0: datetime) -> tuple[GateResult, ...]:
    result, put = make_result(writer, provenance, t0), putter(writer)
    sweep = judged_sweep(writer, row_key({}))
    return (
        _contract(result, put, 1, {}, {SIZE_TOO_LARGE: 400, N_TOO_MANY: 400}),
        result(
            2, "bf16-parity", "parity", {},
            outcome=GateOutcome.PASSED,
            command=("omniqual", "gate", "run", "bf16-parity", "--prompt", "a red fox"),
            requested={"seed": 7, "prompt": "a red fox in snow", "num_inference_steps": 28},
            effective={"seed": 7, "num_inference_steps": 28},
            measurements=(Measurement(name="psnr", value=38.25, unit="dB", samples=4, bound=30.0,
                                      ok=True),),
            artifacts=(put("reference-seed7.png", "output-image"),
                       put("candidate-seed7.png", "output-image")),
        ),
        result(
            3, "fp8-parity", "fp8_parity", FP8,
            outcome=GateOutcome.PASSED,
            requested={"quantization": "fp8", "attention_backend": "flash"},
            effective={"quantization": "fp8", "attention_backend": "sdpa"},
            measurements=(Measurement(name="psnr", value=31.5, unit="dB", samples=4, bound=30.0,
                                      ok=True),),
            artifacts=(put("fp8-seed7.png", "output-image"),),
        ),
        result(
            4, "hsdp-dlo-fail-fast", "fails_fast", HSDP,
            outcome=GateOutcome.PASSED,
            command=("vllm", "serve", "black-forest-labs/FLUX.1-dev", "--omni", "--hsdp", "2"),
            requested={"recipe": "flux-dev-hsdp-dlo", "expect": "rejects", "attempts": 1},
            effective={"reason": "exited", "exit_code": 1, "attempts": 1, "refusals": 1,
                       "matched_line": "HSDP would double-shard DLO AllGather parameters"},
            artifacts=(writer.put_artifact(json.dumps({"recipe": "flux-dev-hsdp-dlo"}).encode(),
                                           media_type="application/json",
                                           role="fail-fast-evidence", name="fail-fast-evidence"),
                       put("fail-fast-stderr.log", "server-log", "text/plain")),
            measurements=(Measurement(name="time_to_failure", value=3.2, unit="s", bound=60.0,
                                      ok=True, samples=1),),
        ),
        result(
            5, "abort-mid-denoise", "abort", {},
            outcome=GateOutcome.ERRORED,
            reasons=("harness lost the connection before the abort was sent",),
            error=ErrorInfo(type="ConnectError", message="connection refused by 127.0.0.1:8091",
                            traceback="Traceback (most recent call last): ..."),
        ),
        result(
            6, "load-poisson", "load", WAN,
            outcome=GateOutcome.FAILED,
            reasons=("p95 latency 41200.0 ms > 30000.0 ms",),
            measurements=(
                Measurement(name="latency_p50", value=18250.0, unit="ms", samples=120),
                Measurement(name="latency_p95", value=41200.0, unit="ms", samples=120,
                            bound=30000.0, ok=False),
                Measurement(name="throughput", value=0.0483, unit="req/s", samples=120),
            ),
            artifacts=(put("latencies.json", "raw-series", "application/json"),),
        ),
        result(
            7, "gpu-probe", "custom_probe", {},
            outcome=GateOutcome.PASSED,
            measurements=(Measurement(name="hbm_peak", value=61.75, unit="GiB"),),
        ),
        result(
            8, "offload-sweep", "offload_sweep", {},
            outcome=sweep.outcome, reasons=sweep.reasons, measurements=sweep.measurements,
            artifacts=sweep.artifacts, requested=sweep.requested, effective=sweep.effective,
        ),
        _contract(result, put, 9, FP8, {SIZE_TOO_LARGE: 400, N_ZERO: 422}),
    )  # fmt: skip
