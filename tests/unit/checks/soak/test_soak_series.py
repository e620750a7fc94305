"""Recording the soak's series and stage accounting: rate windows, the latency CDF, the shared
clock, the compact form, stage classification and the rest; and the soak gate keeps them as an
artifact and in its result (in-process fake, no sockets)."""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path

import httpx
import pytest

from omniqual.checks.load_binding import OmniSend
from omniqual.checks.soak import SoakCheck
from omniqual.checks.soak.series import (
    PhaseRun,
    rate_windows,
    soak_series,
    stage_accounting,
    window_width,
)
from omniqual.checks.soak.watch import ResourcePoint
from omniqual.client import OmniClient
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.soak_series import MAX_CDF_POINTS, SoakSeries, latency_cdf
from omniqual.domain.stage_accounting import PROFILER_FLAG, StageAccounting, account, stage_of
from omniqual.loadgen.records import (
    EffectiveLoad,
    LoadRun,
    OutcomeStatus,
    RecordStatus,
    RequestedLoad,
    RequestRecord,
)
from omniqual.loadgen.schedule import ArrivalPattern
from omniqual.loadgen.workload import EndpointKind, PlannedRequest, RequestParams
from tests.fakes.check_context import context
from tests.unit.checks.soak.test_soak_faults import ASSUMED_RPS, fake, params


def record(i: int, scheduled: float, ended: float | None, *, entry: str = "small",
           status: RecordStatus = RecordStatus.OK, timings: tuple[tuple[str, float], ...] = (),
           peak: float | None = None) -> RequestRecord:  # fmt: skip
    return RequestRecord(i, entry, status, scheduled, scheduled, scheduled, ended, False,
                         200, None, timings, peak)  # fmt: skip


def run_of(records: list[RequestRecord], window_s: float, started: float) -> LoadRun:
    end = max(r.ended_s or 0.0 for r in records)
    effective = EffectiveLoad(len(records), len(records), 1.0, 1.0, end, None, 0.0, 0.0, 0,
                              0.0, 0.0, 1)  # fmt: skip
    requested = RequestedLoad(ArrivalPattern.CONSTANT, 2.0, None, None, len(records), None,
                              len(records), window_s, None, None)  # fmt: skip
    return LoadRun(requested, effective, tuple(records), started)


def test_rate_windows_count_offered_issued_and_achieved() -> None:
    records = [record(0, 0.1, 0.4), record(1, 0.6, 1.7), record(2, 0.9, None,
               status=RecordStatus.NOT_ISSUED), record(3, 1.2, 1.3, status=RecordStatus.ERROR)]
    # NOT_ISSUED still has a scheduled time (offered) but a sent time too in this helper.
    windows = rate_windows(records, 2.0, 1.0)
    assert [(w.start_s, w.end_s) for w in windows] == [(0.0, 1.0), (1.0, 2.0)]
    assert [w.offered_rps for w in windows] == [3.0, 1.0]
    assert [w.achieved_rps for w in windows] == [1.0, 1.0]  # the error is not achieved


def test_latency_cdf_exact_then_thinned_keeping_the_extremes() -> None:
    assert latency_cdf([0.3, 0.1]) == [(0.1, 0.5), (0.3, 1.0)]
    many = latency_cdf([float(i) for i in range(1000)])
    assert len(many) == MAX_CDF_POINTS
    assert many[0] == (0.0, 0.001) and many[-1] == (999.0, 1.0)
    assert all(a[0] <= b[0] and a[1] < b[1] for a, b in itertools.pairwise(many))


def test_phases_sit_on_the_watch_clock_and_compact_drops_requests() -> None:
    first = run_of([record(0, 0.5, 1.0), record(1, 1.0, 1.2, entry="small:cut",
                                               status=RecordStatus.ABORTED)], 1.0, 1000.0)
    second = run_of([record(0, 0.5, 0.9), record(1, 1.0, 3.0, status=RecordStatus.TIMEOUT)],
                    1.0, 1010.0)  # fmt: skip
    points = [ResourcePoint(float(t), "process-tree", 100 * t, 50 * t, 9, 0) for t in range(900)]
    series = soak_series([PhaseRun("below", 0.5, 2.0, first), PhaseRun("above", 1.2, 4.8, second)],
                         points, 995.0, "process-tree")  # fmt: skip
    below, above = series.phases
    assert (below.start_s, above.start_s) == (5.0, 15.0)
    assert (below.ok, below.failed, below.injected) == (1, 0, 1)
    assert (above.ok, above.failed) == (1, 1)
    assert below.latency_cdf == [(0.5, 1.0)]
    assert series.memory[10].memory_bytes == 500  # PSS before RSS
    small = series.compacted()
    assert small.compact and all(not p.requests for p in small.phases)
    assert len(small.memory) <= 401 and small.memory[-1] == series.memory[-1]
    assert SoakSeries.model_validate_json(series.model_dump_json()) == series


@pytest.mark.parametrize(("name", "stage"), [
    ("StableDiffusion3Pipeline.text_encoder.forward", "encode"),
    ("StableDiffusion3Pipeline.diffuse", "denoise"), ("WanPipeline.vae.decode", "decode"),
    ("queue_wait", "queue"), ("QwenImageEditPipeline.vae.encode", "encode"),
    ("stage_0_gen", None), ("StableDiffusion3Pipeline.forward", None), ("mystery", None),
])  # fmt: skip
def test_reported_names_map_to_stages(name: str, stage: str | None) -> None:
    assert stage_of(name) == stage


def test_rest_is_latency_minus_classified_stages_and_totals_are_not_summed() -> None:
    stages = {"P.text_encoder.forward": 0.1, "P.diffuse": 0.5, "P.vae.decode": 0.2,
              "queue_wait": 0.05, "stage_0_gen": 0.8}  # fmt: skip
    found = account([(1.0, stages, 900.0), (2.0, {k: 2 * v for k, v in stages.items()}, 950.0),
                     (3.0, {}, None)])  # fmt: skip
    by = {f.stage: f for f in found.stages}
    assert (found.requests, found.reporting) == (3, 2)
    assert by["denoise"].mean_s == pytest.approx(0.75) and by["denoise"].samples == 2
    assert found.rest is not None and found.rest.p50_s == pytest.approx((0.15 + 0.3) / 2)
    assert found.other_names == ["stage_0_gen"] and not found.missing
    assert found.peak_memory_mb_max == 950.0 and not found.note


def test_without_the_profiler_only_queue_is_reported_and_the_note_names_the_flag() -> None:
    found = account([(0.04, {"queue_wait": 0.0002, "stage_0_gen": 0.03}, None)])
    assert [f.stage for f in found.stages] == ["queue"]
    assert found.missing == ["encode", "denoise", "decode"] and PROFILER_FLAG in found.note


def test_stage_accounting_reads_plain_ok_records_only() -> None:
    timings = (("stage:P.diffuse", 0.3), ("inference", 0.4))
    run = run_of([record(0, 0.0, 1.0, timings=timings, peak=10.0),
                  record(1, 0.0, 1.0, entry="small:cut", timings=timings),
                  record(2, 0.0, 1.0, status=RecordStatus.ERROR, timings=timings)], 1.0, 0.0)
    found = stage_accounting([PhaseRun("near", 0.9, 1.0, run)])
    assert found.requests == 1 and [f.stage for f in found.stages] == ["denoise"]
    assert found.peak_memory_mb_max == 10.0


def test_send_records_body_stage_durations_and_peak_memory() -> None:
    doc = {"data": [{"b64_json": "AAAA"}], "metrics": {
        "stage_durations": {"P.diffuse": 0.2, "queue_wait_ms": 5.0}, "peak_memory_mb": 512.0}}

    def answer(_request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=doc)

    async def go() -> tuple[OutcomeStatus, tuple[tuple[str, float], ...], float | None]:
        async with OmniClient("http://fake", transport=httpx.MockTransport(answer)) as client:
            planned = PlannedRequest(0, 0.0, "small", "t2i", EndpointKind.IMAGE,
                                     RequestParams(64, 64, None, 2, 6, None, 1, ()))  # fmt: skip
            outcome = await OmniSend(client)(planned)
            return outcome.status, outcome.server_timings_s, outcome.peak_memory_mb

    status, timings, peak = asyncio.run(go())
    assert status is OutcomeStatus.OK
    assert timings == (("stage:P.diffuse", 0.2), ("stage:queue_wait", 0.005))
    assert peak == 512.0


def test_soak_keeps_its_series_artifact_and_compact_record(tmp_path: Path) -> None:
    phases = [{"name": n, "factor": f, "requests": 24, "slo_bound_s": 5.0}
              for n, f in (("below", 0.5), ("above", 1.2))]  # fmt: skip
    soak = params(tmp_path, phases=phases,
                  validity={"confidence": 0.9, "max_p99_issue_lag_s": 1.0,
                            "min_phase_requests": 20})  # fmt: skip
    ctx, harness = context("soak", "images-generations", fake=fake(tmp_path))
    outcome = asyncio.run(SoakCheck().run(ctx, soak))
    assert outcome.outcome is not GateOutcome.ERRORED, outcome.reasons
    series = SoakSeries.model_validate_json(harness.sink.blobs["soak-series.json"])
    assert [p.name for p in series.phases] == ["below", "above"]
    assert sum(len(p.requests) for p in series.phases) == 48
    below = series.phases[0]
    assert below.windows and below.latency_cdf
    assert below.offered_rps == pytest.approx(0.5 * ASSUMED_RPS)
    assert series.memory and series.memory_source == "metrics"
    assert series.phases[1].start_s > below.start_s >= 0
    compact = SoakSeries.model_validate(outcome.effective["soak_series"])
    assert compact.compact and compact.phases[0].latency_cdf == below.latency_cdf
    accounting = StageAccounting.model_validate(outcome.effective["stage_accounting"])
    assert accounting.requests == below.ok + series.phases[1].ok
    # The fake reports no stages: the record says none reported, it does not invent zeros.
    assert accounting.reporting == 0 and not accounting.stages
    assert json.loads(harness.sink.blobs["soak-summary.json"])["phases"]


def test_windows_expect_several_requests_each_at_the_phase_rate() -> None:
    records = [record(i, 0.5 * i, 0.5 * i + 0.1) for i in range(40)]
    slow = run_of(records, 20.0, 0.0)  # requested rate 2/s: 5 requests per 2.5 s window
    assert window_width(slow) == pytest.approx(2.5)
    long = run_of([record(i, 0.5 * i, 0.5 * i + 0.1) for i in range(400)], 200.0, 0.0)
    assert window_width(long) == pytest.approx(10.0)  # 200 s / 20 windows
