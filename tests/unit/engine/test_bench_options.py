"""``omniqual bench`` option checks: one rate mode, one bound, a known profile."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from omniqual.engine.bench.options import make_options, parse_profile, parse_rates, parse_slo
from omniqual.loadgen.schedule import ArrivalPattern


def _make(tmp_path: Path, **changes: Any) -> Any:
    workload = tmp_path / "mix.yaml"
    workload.write_text("name: x\n", encoding="utf-8")
    kwargs: dict[str, Any] = {
        "target": "http://127.0.0.1:9", "workload": workload, "rate": 5.0, "rates": None,
        "sweep": False, "profile": "poisson", "duration_s": 2.0, "requests": None, "seed": 0,
    }  # fmt: skip
    kwargs.update(changes)
    return make_options(**kwargs)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"rates": "1,2"}, "exactly one of --rate, --rates or --sweep"),
        ({"sweep": True}, "exactly one of --rate, --rates or --sweep"),
        ({"rate": None}, "got none of them"),
        ({"requests": 10}, "exactly one of --duration or --requests"),
        ({"duration_s": None}, "exactly one of --duration or --requests"),
        ({"duration_s": -1.0}, "--duration must be a positive"),
        ({"profile": "weibull"}, "is not one of poisson, gamma:CV"),
        ({"profile": "gamma:fast"}, "gamma needs a number"),
        ({"profile": "gamma:0"}, "CV must be positive"),
        ({"profile": "trace:/no/such/file.jsonl"}, "no such trace file"),
        ({"slo": "p90:2"}, "--slo only applies to --sweep"),
        ({"workload": Path("/no/such/mix.yaml")}, "no such file"),
        ({"rate": 0.0}, "--rate must be positive"),
    ],
)
def test_bad_combinations_are_usage_errors(
    tmp_path: Path, changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        _make(tmp_path, **changes)


def test_good_options(tmp_path: Path) -> None:
    options = _make(tmp_path, rate=None, rates="1,2.5", profile="gamma:2")
    assert options.rates == (1.0, 2.5) and options.mode == "rates"
    assert options.profile.pattern is ArrivalPattern.GAMMA and options.profile.label == "gamma:2"
    schedule = options.schedule(10.0)
    assert schedule.pattern is ArrivalPattern.GAMMA and schedule.seed == 0
    assert options.schedule(10.0, seed_offset=1).seed == 1
    sweep = _make(tmp_path, rate=None, sweep=True, slo="p90:2.5")
    assert sweep.mode == "sweep" and sweep.slo == (90.0, 2.5)


def test_profile_and_rate_parsers() -> None:
    assert parse_profile("constant").pattern is ArrivalPattern.CONSTANT
    assert parse_profile("Poisson").pattern is ArrivalPattern.POISSON
    with pytest.raises(ValueError, match="not a number"):
        parse_rates("1,x")
    with pytest.raises(ValueError, match="positive"):
        parse_rates("1,-2")
    with pytest.raises(ValueError, match="expected pPCT:SECONDS"):
        parse_slo("fast")
    assert parse_slo("p99:0.5") == (99.0, 0.5)


def test_a_trace_profile_replays_its_file(tmp_path: Path) -> None:
    trace = tmp_path / "arrivals.jsonl"
    trace.write_text('{"timestamp": 0}\n{"timestamp": 0.5}\n{"timestamp": 2.5}\n', "utf-8")
    options = _make(tmp_path, profile=f"trace:{trace}", duration_s=None, requests=3)
    schedule = options.schedule(1.0)
    assert schedule.pattern is ArrivalPattern.TRACE and schedule.offsets_s == (0.0, 0.5, 2.5)
    assert options.profile.label == "trace"  # a local path never reaches the result
    with pytest.raises(ValueError, match="a trace profile fixes it"):
        _make(tmp_path, rate=None, sweep=True, profile=f"trace:{trace}")
