"""The soak gate against the in-process fake (no sockets): passes when clean, and each fault it
targets makes it fail (or be invalid) with a reason naming the fault."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from omniqual.checks.base import CheckOutcome
from omniqual.checks.soak import SoakCheck
from omniqual.checks.soak import gate as soak_module
from omniqual.checks.soak.judge import PhaseEvidence, judge_injections, judge_phase
from omniqual.checks.soak.params import InjectionSpec, PhaseSpec, SoakParams, Validity
from omniqual.domain.outcomes import GateOutcome
from omniqual.loadgen.records import (
    EffectiveLoad,
    LoadRun,
    RecordStatus,
    RequestedLoad,
    RequestRecord,
)
from omniqual.loadgen.saturation import SaturationResult, SloTarget, StopReason
from omniqual.loadgen.schedule import ArrivalPattern
from tests.fakes.check_context import Harness, context
from tests.fakes.fake_config import FakeConfig, FakeFaults, LatencySpike
from tests.fakes.fake_omni import FakeOmni
from tests.fakes.fake_serial import SerialFakeOmni

ASSUMED_RPS = 40.0
"""The saturation the phases are paced from, instead of a search: the serial fake serves a
request in 10-20 ms (a knee of 50-100 a second), so ``below`` and ``near`` stay under it while a
phase of 40 requests lasts one to two seconds, not two to four. ``fake`` serves a video job in
0.1 s, so a video row's phases load it as much beyond its rate as at 20 a second and 0.2 s."""


def params(tmp_path: Path, **overrides: Any) -> SoakParams:
    doc: dict[str, Any] = {
        "shapes": [{"name": "small", "width": 16, "height": 16, "steps": 2, "weight": 3},
                   {"name": "medium", "width": 32, "height": 32, "steps": 4, "weight": 1}],
        "warmup_per_shape": 1, "calibration_repeats": 2, "drain_grace_s": 5,
        "saturation": {"assume_rps": ASSUMED_RPS},
        "phases": [
            {"name": "below", "factor": 0.5, "requests": 40, "slo_bound_x_service": 20},
            {"name": "near", "factor": 0.9, "requests": 40, "slo_bound_x_service": 20},
            {"name": "above", "factor": 1.2, "requests": 30, "claimed_percentiles": [50],
             "slo_percentile": None},
        ],
        "injections": {"rate": 0.1, "cut_fraction": 0.5},
        "reliability": {"settle_s": 0.3, "observer_interval_s": 0.1, "health_interval_s": 0.2,
                        "health_timeout_s": 0.5, "watch_dirs": [str(tmp_path)]},
        # The fake shares this event loop, so a busy host delays issuing: issue lag and the
        # achieved issue rate are not what these tests are about (the loadgen's own tests are).
        "validity": {"confidence": 0.95, "max_p99_issue_lag_s": 1.0, "min_issue_fidelity": 0.75,
                     "min_phase_requests": 20},
    }  # fmt: skip
    doc.update(overrides)
    return SoakParams.model_validate(doc)


def fake(tmp_path: Path, **faults: Any) -> SerialFakeOmni:
    return SerialFakeOmni(FakeConfig(image_work_s=0.01, video_queue_s=0.01, video_run_s=0.1,
                                     temp_dir=tmp_path, hang_s=5, faults=FakeFaults(**faults)))


def run(server: FakeOmni, soak: SoakParams, api_mode: str = "images-generations",
        harness: Harness | None = None) -> tuple[CheckOutcome, Harness]:  # fmt: skip
    ctx, used = context("soak", api_mode, fake=server, harness=harness)
    return asyncio.run(SoakCheck().run(ctx, soak)), used


def test_clean_fake_passes_with_evidence(tmp_path: Path) -> None:
    server = fake(tmp_path)
    # An absolute bound: this machine's load must not decide a test about clean behaviour.
    phases = [{"name": n, "factor": f, "requests": 40, "slo_bound_s": 2.0}
              for n, f in (("below", 0.5), ("near", 0.9))]  # fmt: skip
    phases.append({"name": "above", "factor": 1.2, "requests": 30, "claimed_percentiles": [50],
                   "slo_percentile": None})  # fmt: skip
    outcome, harness = run(server, params(tmp_path, phases=phases))
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    names = {m.name for m in outcome.measurements}
    assert {"below.latency_p90_s", "near.achieved_issue_rps", "memory_slope_mib_per_min"} <= names
    rows = harness.sink.blobs["soak-requests.jsonl"].decode().splitlines()
    assert len(rows) == 110  # every planned request has one record
    assert {json.loads(r)["status"] for r in rows} <= {"ok", "aborted"}
    assert server.state.aborted >= 3  # injected disconnects reached the server
    assert harness.progress[-3:] == ["soak phase below", "soak phase near", "soak phase above"]


def test_saturation_search_finds_the_serial_fake_knee(tmp_path: Path) -> None:
    server = fake(tmp_path)
    soak = params(tmp_path, saturation={"probe_requests": 16, "max_probes": 5, "max_rps": 400})
    outcome, harness = run(server, soak)
    summary = json.loads(harness.sink.blobs["soak-summary.json"])
    sat = summary["saturation"]
    assert sat["best_rps"] is not None and sat["lowest_failing_rps"] > sat["best_rps"]
    # One worker at ~10-20 ms per request: the knee is tens of requests per second, not 400.
    assert sat["best_rps"] < 200
    assert outcome.outcome is not GateOutcome.ERRORED


def test_latency_spike_in_one_phase_fails_that_phase(tmp_path: Path) -> None:
    # Parallel workers: the spike adds latency without a queue collapse, so only the SLO trips.
    server = FakeOmni(FakeConfig(image_work_s=0.01, temp_dir=tmp_path))
    harness = Harness()

    def spike() -> None:
        server.reset_origin()
        server.config.faults.latency_spike = LatencySpike(start_s=0, duration_s=60, extra_s=1.0)

    def calm() -> None:
        server.config.faults.latency_spike = None

    harness.hooks = {"soak phase near": spike, "soak phase above": calm}
    outcome, _ = run(server, params(tmp_path), harness=harness)
    assert outcome.outcome is GateOutcome.FAILED
    assert any(r.startswith("phase near: p90 latency") for r in outcome.reasons), outcome.reasons
    assert not any(r.startswith("phase below: p90") for r in outcome.reasons)


def test_dropped_requests_fail_on_error_rate(tmp_path: Path) -> None:
    outcome, _ = run(fake(tmp_path, drops_requests=15), params(tmp_path))
    assert outcome.outcome is GateOutcome.FAILED
    assert any("error rate" in r and "TargetProtocolError" in r for r in outcome.reasons)


def test_leak_per_abort_fails_memory_and_temp_files(tmp_path: Path) -> None:
    outcome, _ = run(fake(tmp_path, leaks_per_abort=True), params(tmp_path))
    assert outcome.outcome is GateOutcome.FAILED
    assert any("files in watched temp dirs grew" in r for r in outcome.reasons)
    assert any("RSS memory slope" in r for r in outcome.reasons), outcome.reasons


def test_hang_after_disconnect_fails_health(tmp_path: Path) -> None:
    outcome, _ = run(fake(tmp_path, hangs_after_disconnect=True), params(tmp_path))
    assert outcome.outcome is GateOutcome.FAILED
    assert any(r.startswith("health: GET /health") and "no answer" in r for r in outcome.reasons)


def test_too_short_for_claimed_p99_is_invalid_not_passed(tmp_path: Path) -> None:
    phases = [{"name": "near", "factor": 0.5, "requests": 40, "claimed_percentiles": [50, 99],
               "slo_percentile": 99, "slo_bound_x_service": 50}]  # fmt: skip
    soak = params(tmp_path, phases=phases, validity={"confidence": 0.99,
                                                     "max_p99_issue_lag_s": 1.0,
                                                     "min_phase_requests": 20})  # fmt: skip
    outcome, _ = run(fake(tmp_path), soak)
    assert outcome.outcome is GateOutcome.INVALID
    assert any("too_few_samples" in r and "p99" in r for r in outcome.reasons), outcome.reasons


@pytest.mark.parametrize(
    ("fault", "needle"),
    [("two_terminal_states", "two_terminal_states"), ("ignores_cancellation", "after DELETE")],
)
def test_async_job_faults_fail_the_soak(tmp_path: Path, fault: str, needle: str) -> None:
    outcome, _ = run(fake(tmp_path, **{fault: True}), params(tmp_path), "videos-async")
    assert outcome.outcome is GateOutcome.FAILED
    assert any(needle in r for r in outcome.reasons), outcome.reasons


def test_api_mode_without_endpoint_is_skipped(tmp_path: Path) -> None:
    outcome, _ = run(fake(tmp_path), params(tmp_path), "offline")
    assert outcome.outcome is GateOutcome.SKIPPED
    assert "offline" in outcome.reasons[0]


def load_run(
    latencies_s: list[float], *, lag_s: float = 0.0, entries: list[str] | None = None,
    statuses: list[RecordStatus] | None = None, rate: float = 10.0,
) -> LoadRun:  # fmt: skip
    """A run whose requests were scheduled at k/rate, sent ``lag_s`` late, and took the given
    latencies from their schedule."""
    n = len(latencies_s)
    entries = entries or ["small"] * n
    statuses = statuses or [RecordStatus.OK] * n
    records = tuple(
        RequestRecord(i, entries[i], statuses[i], (i + 1) / rate, (i + 1) / rate + lag_s,
                      (i + 1) / rate + lag_s, (i + 1) / rate + latencies_s[i], False)
        for i in range(n)
    )  # fmt: skip
    effective = EffectiveLoad(n, n, rate, rate, n / rate + max(latencies_s), n / rate, lag_s,
                              lag_s, 0, 0.0, 0.0, 1)  # fmt: skip
    requested = RequestedLoad(ArrivalPattern.CONSTANT, rate, None, None, n, None, n, n / rate,
                              None, None)  # fmt: skip
    return LoadRun(requested, effective, records, 0.0)


def test_slo_miss_while_the_schedule_fell_behind_is_invalid_not_failed() -> None:
    spec = PhaseSpec(name="near", factor=0.9, requests=40, slo_bound_s=1.0)
    validity = Validity(confidence=0.95, max_p99_issue_lag_s=0.05, min_phase_requests=20)
    late = PhaseEvidence(spec, 10.0, load_run([2.0] * 40, lag_s=1.5), (), 1.0)
    found, _ = judge_phase(late, validity)
    assert not found.failures, found.failures
    assert any("client-limited: the schedule had already fallen behind" in r
               for r in found.invalid), found.invalid  # fmt: skip
    # The same miss with the client on schedule is the server's: failed.
    on_time = PhaseEvidence(spec, 10.0, load_run([2.0] * 40), (), 1.0)
    found, _ = judge_phase(on_time, validity)
    assert any(r.startswith("phase near: p90 latency") for r in found.failures)


def test_injections_answered_before_the_cut_make_the_soak_invalid() -> None:
    entries = ["small"] * 36 + ["small:cut"] * 4
    answered = [RecordStatus.OK] * 40
    found = judge_injections([load_run([0.1] * 40, entries=entries, statuses=answered)],
                             InjectionSpec(rate=0.1))  # fmt: skip
    assert found.invalid == [
        "injections: only 0 of 4 injected faults happened (4 answered before the cut), fewer "
        "than 50%: the faults were not tested"
    ]
    counted = {m.name: m.value for m in found.measurements}
    assert counted["injected_answered_before_cut"] == 4 and counted["injected_happened"] == 0
    cut = [RecordStatus.OK] * 36 + [RecordStatus.ABORTED] * 4
    ok = judge_injections([load_run([0.1] * 40, entries=entries, statuses=cut)],
                          InjectionSpec(rate=0.1))  # fmt: skip
    assert not ok.invalid


def test_no_injected_request_drawn_is_invalid() -> None:
    found = judge_injections([load_run([0.1] * 40)], InjectionSpec(rate=0.05))
    assert found.invalid and "no fault was tested" in found.invalid[0]


def test_no_saturation_rate_is_recorded_as_absent_not_zero(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def nothing_passes(*_args: Any) -> SaturationResult:
        slo = SloTarget(percentile=50, bound_s=1.0)
        return SaturationResult(slo, (), None, None, StopReason.MIN_RATE_FAILS)

    monkeypatch.setattr(soak_module, "search_saturation", nothing_passes)
    soak = params(tmp_path, saturation={"probe_requests": 8})
    outcome, harness = run(fake(tmp_path), soak)
    assert outcome.outcome is GateOutcome.INVALID
    assert "saturation_rps" not in {m.name for m in outcome.measurements}
    summary = json.loads(harness.sink.blobs["soak-summary.json"])
    assert summary["saturation"]["saturation_rps"] is None
    assert any("found no passing rate (min_rate_fails)" in r for r in outcome.reasons)


def test_soak_of_a_url_target_without_a_watch_directory_is_invalid(tmp_path: Path) -> None:
    # No pid and no watch_dirs: the server's temp dir is unknown, so residue cannot be counted.
    soak = params(tmp_path, reliability={"settle_s": 0.3, "observer_interval_s": 0.1,
                                         "health_interval_s": 0.2, "health_timeout_s": 0.5})
    outcome, _ = run(fake(tmp_path), soak)
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert any(r.startswith("soak: no watch directory") for r in outcome.reasons), outcome.reasons


def test_shipped_soak_projects_its_least_workload_against_its_budget() -> None:
    """gates/soak.yaml as shipped: two probes of 15, then 30 requests per phase at 0.5x, 0.85x
    and (capped at 1x) 1.2x of saturation is 30 + 60 + 35.3 + 30 solo service times. A 1 s
    request fits the 1200 s budget; a 10 s one (an edit conditioned at 1024x1024 on this host
    class) cannot, and says so before the workload is sent."""
    from omniqual.checks.soak.phases import least_soak_requests, soak_past_budget
    from omniqual.domain.gate import GateSpec
    from omniqual.specs.source import load_yaml

    doc = load_yaml(Path(__file__).parents[4] / "gates" / "soak.yaml")
    shipped = GateSpec.model_validate(doc.data)
    soak = SoakParams.model_validate(shipped.params)
    assert shipped.budget_s == 1200
    assert least_soak_requests(soak) == pytest.approx(30 + 60 + 30 / 0.85 + 30)
    assert soak_past_budget(soak, 1.0, shipped.budget_s, 1) is None
    reason = soak_past_budget(soak, 10.0, shipped.budget_s, 1)
    assert reason is not None and reason.startswith("host too slow for this workload")
    assert "took 10.0 s" in reason and "about 1560 s" in reason
    # A row that serves two requests together halves the projection: 780 s fits.
    assert soak_past_budget(soak, 10.0, shipped.budget_s, 2) is None
    assert soak_module.served_at_once("request-batch/2+50ms") == 2
    assert soak_module.served_at_once("serial/1") == 1


def test_a_soak_that_cannot_fit_its_budget_stops_after_the_first_shape(tmp_path: Path) -> None:
    """The fake serves each request in at least 10 ms; 200-odd of them cannot fit 0.5 s. The
    verdict is invalid (host too slow), and the medium shape is never calibrated."""
    server = fake(tmp_path)
    searched = params(tmp_path, saturation={"probe_requests": 8, "max_probes": 2})
    ctx, _ = context("soak", "images-generations", fake=server)
    ctx = replace(ctx, gate=ctx.gate.model_copy(update={"budget_s": 0.5}))
    outcome = asyncio.run(SoakCheck().run(ctx, searched))
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert outcome.reasons[0].startswith("host too slow for this workload (measured: the fastest")
    assert [m.name for m in outcome.measurements] == ["gate_budget"]
    summary = outcome.effective["summary"]
    assert list(summary["solo_latency_s"]) == ["small"]  # type: ignore[call-overload,index]
