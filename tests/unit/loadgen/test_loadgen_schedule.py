from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from pydantic import ValidationError

from omniqual.loadgen.schedule import (
    ArrivalPattern,
    ArrivalSpec,
    TraceError,
    constant_schedule,
    gamma_schedule,
    load_trace,
    parse_trace,
    poisson_schedule,
    trace_schedule,
)


def _gaps(offsets: tuple[float, ...]) -> list[float]:
    return [b - a for a, b in zip((0.0, *offsets[:-1]), offsets, strict=True)]


def test_same_seed_gives_identical_schedule() -> None:
    a = poisson_schedule(5.0, seed=7, duration_s=60)
    b = poisson_schedule(5.0, seed=7, duration_s=60)
    c = poisson_schedule(5.0, seed=8, duration_s=60)
    assert a == b
    assert a.offsets_s != c.offsets_s
    assert gamma_schedule(5.0, cv=2.0, seed=3, count=500) == gamma_schedule(
        5.0, cv=2.0, seed=3, count=500
    )


def test_poisson_mean_gap_and_cv() -> None:
    schedule = poisson_schedule(10.0, seed=1, count=20_000)
    gaps = _gaps(schedule.offsets_s)
    mean = statistics.fmean(gaps)
    # Standard error of the mean is 0.1/sqrt(20000) ~ 0.0007, so 3 % is over 4 sigma.
    assert mean == pytest.approx(0.1, rel=0.03)
    assert statistics.pstdev(gaps) / mean == pytest.approx(1.0, abs=0.05)
    assert len(schedule) == 20_000
    assert schedule.window_s == schedule.offsets_s[-1]


@pytest.mark.parametrize("cv", [0.5, 2.0])
def test_gamma_keeps_mean_and_hits_cv(cv: float) -> None:
    schedule = gamma_schedule(4.0, cv=cv, seed=11, count=50_000)
    gaps = _gaps(schedule.offsets_s)
    mean = statistics.fmean(gaps)
    assert mean == pytest.approx(0.25, rel=0.05)
    assert statistics.pstdev(gaps) / mean == pytest.approx(cv, rel=0.1)
    assert schedule.pattern is ArrivalPattern.GAMMA
    assert schedule.cv == cv


def test_constant_schedule_is_evenly_spaced() -> None:
    schedule = constant_schedule(4.0, count=5)
    assert schedule.offsets_s == pytest.approx((0.25, 0.5, 0.75, 1.0, 1.25))
    assert schedule.seed is None
    assert schedule.planned_rate == pytest.approx(4.0)


def test_duration_and_count_bounds() -> None:
    by_duration = poisson_schedule(20.0, seed=2, duration_s=10)
    assert all(offset < 10 for offset in by_duration.offsets_s)
    assert by_duration.window_s == 10
    assert 150 < len(by_duration) < 250  # 200 expected, sd ~14
    capped = poisson_schedule(20.0, seed=2, duration_s=10, count=50)
    assert len(capped) == 50
    assert capped.offsets_s == by_duration.offsets_s[:50]
    assert constant_schedule(1.0, duration_s=3.5, count=100).offsets_s == (1.0, 2.0, 3.0)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: poisson_schedule(1.0, seed=0), "duration_s, a count"),
        (lambda: poisson_schedule(0.0, seed=0, count=3), "rate must be positive"),
        (lambda: gamma_schedule(1.0, cv=0.0, seed=0, count=3), "cv must be positive"),
        (lambda: constant_schedule(1.0, count=0), "count must be positive"),
    ],
)
def test_bad_parameters_raise(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]


def test_trace_replay_offsets_hints_and_scale() -> None:
    lines = [
        json.dumps({"timestamp": 100.0, "entry": "small", "width": 512, "prompt": "secret"}),
        "",
        json.dumps({"timestamp": 100.5, "steps": 4}),
        json.dumps({"timestamp": 102.0}),
    ]
    parsed = parse_trace(lines)
    schedule = trace_schedule(parsed, time_scale=2.0)
    assert schedule.offsets_s == (0.0, 1.0, 4.0)
    assert schedule.trace_hints[0].entry == "small"
    assert schedule.trace_hints[0].overrides == (("width", 512),)
    assert schedule.trace_hints[1].overrides == (("steps", 4),)
    assert trace_schedule(parsed, duration_s=1.5).offsets_s == (0.0, 0.5)
    assert trace_schedule(parsed, count=1).offsets_s == (0.0,)


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (['{"timestamp": 1}', "{not json"], r"trace.jsonl:2: not valid JSON"),
        (['{"timestamp": 1}', "", '{"timestamp": -3}'], r"trace.jsonl:3: timestamp: .*greater"),
        (['{"timestamp": 2}', '{"timestamp": 1}'], r"trace.jsonl:2: timestamp 1.0 is earlier"),
        (['{"timestamp": 1, "width": "wide"}'], r"trace.jsonl:1: width: "),
        (['{"width": 3}'], r"trace.jsonl:1: timestamp: Field required"),
        (["", "  "], r"trace.jsonl: the trace holds no requests"),
    ],
)
def test_trace_errors_name_the_line(lines: list[str], expected: str) -> None:
    with pytest.raises(TraceError, match=expected):
        parse_trace(lines, source="trace.jsonl")


def test_trace_error_does_not_echo_values() -> None:
    with pytest.raises(TraceError) as caught:
        parse_trace(['{"timestamp": "a cat on the moon"}'], source="t")
    assert "cat on the moon" not in str(caught.value)


def test_arrival_spec_builds_and_validates(tmp_path: Path) -> None:
    spec = ArrivalSpec(pattern=ArrivalPattern.GAMMA, rate=2.0, cv=1.5, seed=9, count=10)
    assert spec.build() == gamma_schedule(2.0, cv=1.5, seed=9, count=10)
    with pytest.raises(ValidationError, match="needs cv"):
        ArrivalSpec(pattern=ArrivalPattern.GAMMA, rate=2.0, count=10)
    with pytest.raises(ValidationError, match="needs rate"):
        ArrivalSpec(pattern=ArrivalPattern.POISSON, count=10)
    with pytest.raises(ValidationError, match="duration_s, count"):
        ArrivalSpec(pattern=ArrivalPattern.CONSTANT, rate=1.0)
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"timestamp": 0}\n{"timestamp": 250}\n', encoding="utf-8")
    built = ArrivalSpec(pattern=ArrivalPattern.TRACE, trace_path=trace, time_scale=0.001).build()
    assert built.offsets_s == pytest.approx((0.0, 0.25))
    assert len(load_trace(trace)) == 2
