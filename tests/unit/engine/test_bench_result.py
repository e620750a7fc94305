"""The bench result: vLLM-Omni's field names, and percentiles never numeric without samples."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from omniqual.engine.bench.options import make_options
from omniqual.engine.bench.result import (
    BenchPhase,
    BenchResult,
    PercentileClaim,
    flat_fields,
    insufficient,
    shown,
)
from omniqual.engine.bench.runner import BenchSession, TargetRefused, describe
from omniqual.loadgen.records import OutcomeStatus, SendOutcome
from omniqual.loadgen.stats import Verdict
from omniqual.loadgen.workload import PlannedRequest, WorkloadSpec

# vLLM-Omni benchmarks/diffusion result keys a dashboard reads.
VLLM_OMNI_FIELDS = {
    "duration", "completed_requests", "failed_requests", "throughput_qps", "latency_mean",
    "latency_median", "latency_p50", "latency_p95", "latency_p99", "peak_memory_mb_max",
    "peak_memory_mb_mean", "peak_memory_mb_median", "endpoint", "model", "dataset", "task",
}  # fmt: skip
SPEC = {
    "name": "unit-mix",
    "entries": [
        {"name": "img", "task": "t2i", "endpoint": "image", "weight": 1,
         "shape": {"width": 64, "height": 64, "steps": 2}},
    ],
}  # fmt: skip


class InstantSend:
    """Answers at once; every third request reports a server peak memory, one in ten fails."""

    async def __call__(self, planned: PlannedRequest, /) -> SendOutcome:
        await asyncio.sleep(0)
        if planned.index % 10 == 9:
            return SendOutcome(OutcomeStatus.ERROR, 500, "http_500")
        peak = 100.0 + planned.index if planned.index % 3 == 0 else None
        return SendOutcome(OutcomeStatus.OK, 200, None, (), peak)


def _phase(tmp_path: Path, requests: int) -> BenchPhase:
    workload = tmp_path / "mix.yaml"
    workload.write_text(json.dumps(SPEC), encoding="utf-8")
    options = make_options(target="http://127.0.0.1:9", workload=workload, rate=2000.0,
                           rates=None, sweep=False, profile="constant", duration_s=None,
                           requests=requests, seed=3)  # fmt: skip
    spec = WorkloadSpec.model_validate(SPEC)
    session = BenchSession(options, spec, InstantSend(), describe(spec, "m"), lambda *_: None)
    asyncio.run(session.phase(2000.0))
    return session.phases[0]


def test_a_short_phase_stores_insufficient_percentiles_as_text(tmp_path: Path) -> None:
    phase = _phase(tmp_path, 40)
    dumped = json.loads(phase.model_dump_json())
    assert set(dumped) >= VLLM_OMNI_FIELDS
    assert phase.completed_requests == 36 and phase.failed_requests == 4
    assert isinstance(phase.latency_p50, float) and phase.latency_median == phase.latency_p50
    assert dumped["latency_p95"] == "insufficient (n < 90)"
    assert dumped["latency_p99"] == "insufficient (n < 459)"
    assert dumped["latency_from_send_p99"] == "insufficient (n < 459)"
    assert phase.verdict is Verdict.INVALID
    assert any("p99 needs >= 459" in reason for reason in phase.reasons)
    assert phase.peak_memory_mb_max == 100.0 + 36  # index 36: the highest multiple of 3 that passed
    assert (phase.endpoint, phase.model, phase.dataset, phase.task) == (
        "/v1/images/generations", "m", "unit-mix", "t2i",
    )  # fmt: skip
    assert shown(phase.latency_p99) == "insufficient (n < 459)"


def test_a_long_enough_phase_claims_p99_as_a_number(tmp_path: Path) -> None:
    phase = _phase(tmp_path, 600)
    assert isinstance(phase.latency_p99, float)
    assert phase.percentiles[-1].samples >= phase.percentiles[-1].required


def test_the_model_refuses_a_number_for_an_unsupported_percentile() -> None:
    with pytest.raises(ValidationError, match="must be stored as insufficient"):
        PercentileClaim(percentile=99.0, value=0.5, samples=10, required=459, upper_bound_s=None)
    with pytest.raises(ValidationError, match="unexpected text"):
        PercentileClaim(percentile=99.0, value="0.5", samples=10, required=459, upper_bound_s=None)
    ok = PercentileClaim(percentile=99.0, value=insufficient(459), samples=10, required=459,
                         upper_bound_s=None)  # fmt: skip
    assert ok.value == "insufficient (n < 459)"


def test_a_phase_field_cannot_contradict_its_claim(tmp_path: Path) -> None:
    phase = _phase(tmp_path, 40)
    data = phase.model_dump()
    data["latency_p99"] = 0.001
    with pytest.raises(ValidationError, match="disagrees"):
        BenchPhase.model_validate(data)


def _result(phases: tuple[BenchPhase, ...], **extra: object) -> BenchResult:
    return BenchResult(
        omniqual_version="0", started_at="2026-01-01T00:00:00+00:00", target="t", workload="w",
        mode="rate" if len(phases) == 1 else "rates", transport="http1 pool", confidence=0.99,
        max_p99_issue_lag_s=0.01, phases=phases, verdict=Verdict.INVALID, reasons=("r",),
        **extra,
    )  # fmt: skip


def test_a_single_phase_run_is_readable_as_a_vllm_omni_result(tmp_path: Path) -> None:
    phase = _phase(tmp_path, 40)
    single = json.loads(_result((phase,), **flat_fields((phase,))).model_dump_json())
    assert set(single) >= VLLM_OMNI_FIELDS
    assert single["latency_p99"] == "insufficient (n < 459)"
    assert single["completed_requests"] == 36
    both = _result((phase, phase), **flat_fields((phase, phase)))
    assert both.duration is None and both.latency_p99 is None
    with pytest.raises(ValidationError, match="differ from the phase"):
        _result((phase,), **{**flat_fields((phase,)), "completed_requests": 1})


class RefusingSend:
    async def __call__(self, planned: PlannedRequest, /) -> SendOutcome:
        return SendOutcome(OutcomeStatus.ERROR, 400, "http_400")


def test_a_target_refusing_every_warm_up_request_stops_the_run(tmp_path: Path) -> None:
    workload = tmp_path / "mix.yaml"
    workload.write_text(json.dumps(SPEC), encoding="utf-8")
    options = make_options(
        target="http://127.0.0.1:9", workload=workload, rate=5.0, rates=None, sweep=False,
        profile="poisson", duration_s=1.0, requests=None, seed=0,
    )  # fmt: skip
    spec = WorkloadSpec.model_validate(SPEC)
    session = BenchSession(options, spec, RefusingSend(), describe(spec, "m"), lambda *_: None)
    with pytest.raises(TargetRefused, match=r"img: http_400\); nothing was benchmarked"):
        asyncio.run(session.warm_up())
    assert session.phases == []
