from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from omniqual.loadgen.records import LoadRun
from omniqual.loadgen.saturation import (
    Probe,
    ProbeVerdict,
    SearchSettings,
    SloTarget,
    StopReason,
    find_saturation,
)

MakeRun = Callable[..., LoadRun]
KNEE = 37.0
SLO = SloTarget(percentile=90, bound_s=1.0)


def _synthetic_server(make_run: MakeRun, calls: list[float]) -> Probe:
    """Below the knee every request takes 0.4 s; above it queueing pushes 30 % past 1 s."""

    async def probe(rate: float) -> LoadRun:
        calls.append(rate)
        slow = 0 if rate <= KNEE else 60
        return make_run([0.4] * (200 - slow) + [3.0] * slow, rate=rate)

    return probe


def test_search_finds_the_knee(make_run: MakeRun) -> None:
    calls: list[float] = []
    settings = SearchSettings(start_rate=4, min_rate=0.5, max_rate=1000, precision=0.02)
    result = asyncio.run(find_saturation(_synthetic_server(make_run, calls), SLO, settings))
    assert result.stop_reason is StopReason.CONVERGED
    assert result.best_rate is not None and result.lowest_failing_rate is not None
    assert KNEE / 1.02 <= result.best_rate <= KNEE < result.lowest_failing_rate
    assert result.lowest_failing_rate / result.best_rate - 1 <= 0.02
    assert [p.rate for p in result.probes] == calls  # every probe recorded, in order
    assert calls[:5] == [4, 8, 16, 32, 64]
    assert all((p.verdict is ProbeVerdict.PASS) == (p.rate <= KNEE) for p in result.probes)
    assert result.probes[0].certificate.required == 44


def test_search_downward_and_bounds(make_run: MakeRun) -> None:
    calls: list[float] = []
    probe = _synthetic_server(make_run, calls)
    down = SearchSettings(start_rate=300, min_rate=1, max_rate=1000, precision=0.1)
    result = asyncio.run(find_saturation(probe, SLO, down))
    assert calls[:3] == [300, 150, 75] and result.best_rate is not None
    assert result.best_rate <= KNEE < (result.lowest_failing_rate or 0)
    capped = SearchSettings(start_rate=4, min_rate=1, max_rate=20)
    top = asyncio.run(find_saturation(probe, SLO, capped))
    assert top.stop_reason is StopReason.MAX_RATE_PASSES and top.best_rate == 20
    floor = SearchSettings(start_rate=100, min_rate=50, max_rate=200)
    bottom = asyncio.run(find_saturation(probe, SLO, floor))
    assert bottom.stop_reason is StopReason.MIN_RATE_FAILS and bottom.best_rate is None
    budget = SearchSettings(start_rate=1, min_rate=1, max_rate=1000, max_probes=3)
    short = asyncio.run(find_saturation(probe, SLO, budget))
    assert short.stop_reason is StopReason.PROBE_BUDGET and len(short.probes) == 3


def test_too_few_samples_fail_and_client_lag_is_not_blamed_on_server(make_run: MakeRun) -> None:
    async def tiny(rate: float) -> LoadRun:
        return make_run([0.1] * 20, rate=rate)  # 20 samples cannot certify p90 (needs 44)

    settings = SearchSettings(start_rate=10, min_rate=10, max_rate=100)
    result = asyncio.run(find_saturation(tiny, SLO, settings))
    assert result.probes[0].verdict is ProbeVerdict.FAIL
    assert result.probes[0].certificate.shortfall == 24

    async def behind(rate: float) -> LoadRun:
        return make_run([0.1] * 200, rate=rate, achieved_issue_rate=rate * 0.8)

    lagging = asyncio.run(find_saturation(behind, SLO, settings))
    assert lagging.stop_reason is StopReason.CLIENT_LIMITED
    assert lagging.probes[0].verdict is ProbeVerdict.CLIENT_LIMITED
    assert lagging.probes[0].issue_fidelity == pytest.approx(0.8)
