"""Recording the soak's series: each phase's load run and the resource watch become one
``SoakSeries`` (artifact ``soak-series.json``, compacted into the result's ``effective``), and
the plain requests answered OK become the row's stage accounting.

It records what happened; it judges nothing (``judge`` and ``resources`` do).
"""

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from omniqual.checks.soak.phases import is_injected
from omniqual.checks.soak.watch import ResourcePoint
from omniqual.domain.soak_series import (
    MemoryPoint,
    PhaseSeries,
    RateWindow,
    RequestPoint,
    SoakSeries,
    latency_cdf,
)
from omniqual.domain.stage_accounting import StageAccounting, account
from omniqual.loadgen.records import LoadRun, RecordStatus, RequestRecord

MIN_WINDOW_S = 0.25
TARGET_WINDOWS = 20
MIN_EXPECTED_PER_WINDOW = 5
"""Poisson counts of one or two per window plot as noise: a window holds about this many
scheduled requests at the phase's rate (fewer windows on a slow phase)."""
STAGE_PREFIX = "stage:"


@dataclass(frozen=True, slots=True)
class PhaseRun:
    name: str
    factor: float | None
    offered_rps: float
    run: LoadRun


def window_width(run: LoadRun) -> float:
    """At most about :data:`TARGET_WINDOWS` windows over the phase, each expecting at least
    :data:`MIN_EXPECTED_PER_WINDOW` requests at the requested rate, none shorter than
    :data:`MIN_WINDOW_S`."""
    span = max(run.requested.window_s, run.effective.actual_duration_s)
    rate = run.requested.rate or run.requested.planned_rate
    expected = MIN_EXPECTED_PER_WINDOW / rate if rate > 0 else 0.0
    return max(MIN_WINDOW_S, span / TARGET_WINDOWS, expected)


def rate_windows(records: Sequence[RequestRecord], span_s: float, width_s: float
                 ) -> list[RateWindow]:  # fmt: skip
    count = max(1, math.ceil(span_s / width_s))
    offered, issued, achieved = [0] * count, [0] * count, [0] * count

    def slot(at: float | None) -> int | None:
        if at is None or at < 0:
            return None
        return min(int(at // width_s), count - 1)

    for record in records:
        for series, at in ((offered, record.scheduled_s), (issued, record.sent_s)):
            if (k := slot(at)) is not None:
                series[k] += 1
        if record.status is RecordStatus.OK and (k := slot(record.ended_s)) is not None:
            achieved[k] += 1
    return [
        RateWindow(start_s=k * width_s, end_s=(k + 1) * width_s, offered_rps=offered[k] / width_s,
                   issued_rps=issued[k] / width_s, achieved_rps=achieved[k] / width_s)
        for k in range(count)
    ]  # fmt: skip


def phase_series(phase: PhaseRun, clock_zero_unix: float) -> PhaseSeries:
    run = phase.run
    width = window_width(run)
    span = max(run.requested.window_s, run.effective.actual_duration_s)
    plain = [r for r in run.records if not is_injected(r.entry)]
    ok_latencies = [lat for r in plain if r.status is RecordStatus.OK
                    and (lat := r.latency_from_schedule_s) is not None]  # fmt: skip
    return PhaseSeries(
        name=phase.name, factor=phase.factor, offered_rps=phase.offered_rps,
        start_s=run.started_at_unix - clock_zero_unix, duration_s=run.effective.actual_duration_s,
        window_s=width,
        requests=[RequestPoint(index=r.index, entry=r.entry, injected=is_injected(r.entry),
                               scheduled_s=r.scheduled_s, latency_s=r.latency_from_schedule_s,
                               outcome=r.status.value) for r in run.records],
        windows=rate_windows(run.records, span, width),
        latency_cdf=latency_cdf(ok_latencies),
        ok=len(ok_latencies), failed=len(plain) - len(ok_latencies),
        injected=len(run.records) - len(plain),
    )  # fmt: skip


def memory_points(points: Iterable[ResourcePoint]) -> list[MemoryPoint]:
    return [MemoryPoint(elapsed_s=p.elapsed_s, memory_bytes=p.memory_bytes,
                        gpu_tree_bytes=p.gpu_tree_bytes, open_fds=p.open_fds,
                        temp_files=p.temp_files) for p in points]  # fmt: skip


def soak_series(phases: Sequence[PhaseRun], points: Sequence[ResourcePoint],
                clock_zero_unix: float, memory_source: str | None) -> SoakSeries:  # fmt: skip
    return SoakSeries(memory_source=memory_source,
                      phases=[phase_series(p, clock_zero_unix) for p in phases],
                      memory=memory_points(points))  # fmt: skip


def stage_accounting(phases: Sequence[PhaseRun]) -> StageAccounting:
    """Over the plain requests answered OK in every phase: client latency from send (what the
    server could have spent) against the stages it reported."""
    samples = []
    for phase in phases:
        for record in phase.run.records:
            latency = record.latency_from_send_s
            if record.status is not RecordStatus.OK or is_injected(record.entry) or latency is None:
                continue
            stages = {name[len(STAGE_PREFIX):]: seconds for name, seconds in
                      record.server_timings_s if name.startswith(STAGE_PREFIX)}  # fmt: skip
            samples.append((latency, stages, record.peak_memory_mb))
    return account(samples)
