"""What one ``omniqual bench`` run was asked to do, checked before anything is contacted.

Every mistake here is a ``ValueError`` with a sentence the CLI prints as is (exit 2): exactly
one of rate / rates / sweep, exactly one of duration / requests, and a profile among
``poisson``, ``gamma:CV``, ``constant`` and ``trace:FILE``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from omniqual.loadgen.schedule import (
    ArrivalPattern,
    Schedule,
    constant_schedule,
    gamma_schedule,
    load_trace,
    poisson_schedule,
    trace_schedule,
)

PROFILES = "poisson, gamma:CV (e.g. gamma:2), constant or trace:FILE"


@dataclass(frozen=True, slots=True)
class Profile:
    pattern: ArrivalPattern
    cv: float | None = None
    trace: Path | None = None

    @property
    def label(self) -> str:
        if self.pattern is ArrivalPattern.GAMMA:
            return f"gamma:{self.cv:g}"
        if self.pattern is ArrivalPattern.TRACE:
            return "trace"  # the file's path is the user's, not part of a shareable result
        return self.pattern.value


def parse_profile(text: str) -> Profile:
    kind, _, arg = text.strip().partition(":")
    kind = kind.lower()
    if kind in ("poisson", "constant") and not arg:
        return Profile(ArrivalPattern(kind))
    if kind == "gamma":
        try:
            cv = float(arg)
        except ValueError:
            raise ValueError(f"--profile {text!r}: gamma needs a number, e.g. gamma:2") from None
        if not (cv > 0 and math.isfinite(cv)):
            raise ValueError(f"--profile {text!r}: the gamma CV must be positive")
        return Profile(ArrivalPattern.GAMMA, cv=cv)
    if kind == "trace" and arg:
        path = Path(arg)
        if not path.is_file():
            raise ValueError(f"--profile {text!r}: no such trace file")
        return Profile(ArrivalPattern.TRACE, trace=path)
    raise ValueError(f"--profile {text!r} is not one of {PROFILES}")


def parse_rates(text: str) -> tuple[float, ...]:
    rates: list[float] = []
    for part in text.split(","):
        try:
            rate = float(part)
        except ValueError:
            raise ValueError(f"--rates {text!r}: {part.strip()!r} is not a number") from None
        if not (rate > 0 and math.isfinite(rate)):
            raise ValueError(f"--rates {text!r}: every rate must be positive and finite")
        rates.append(rate)
    return tuple(rates)


@dataclass(frozen=True, slots=True)
class BenchOptions:
    target: str
    workload: Path
    rates: tuple[float, ...]  # empty for a sweep
    sweep: bool
    profile: Profile
    duration_s: float | None
    requests: int | None
    seed: int
    in_flight_cap: int | None = None
    max_p99_issue_lag_s: float = 0.010
    confidence: float = 0.99
    slo: tuple[float, float] | None = None  # sweep: (percentile, bound seconds)
    max_rate: float = 1000.0
    request_timeout_s: float = 600.0

    @property
    def mode(self) -> Literal["rate", "rates", "sweep"]:
        return "sweep" if self.sweep else ("rate" if len(self.rates) == 1 else "rates")

    def schedule(self, rate: float, seed_offset: int = 0) -> Schedule:
        seed = self.seed + seed_offset
        profile = self.profile
        if profile.pattern is ArrivalPattern.TRACE:
            assert profile.trace is not None
            return trace_schedule(
                load_trace(profile.trace), duration_s=self.duration_s, count=self.requests
            )
        if profile.pattern is ArrivalPattern.POISSON:
            return poisson_schedule(rate, seed=seed, duration_s=self.duration_s,
                                    count=self.requests)  # fmt: skip
        if profile.pattern is ArrivalPattern.GAMMA:
            assert profile.cv is not None
            return gamma_schedule(rate, cv=profile.cv, seed=seed, duration_s=self.duration_s,
                                  count=self.requests)  # fmt: skip
        return constant_schedule(rate, duration_s=self.duration_s, count=self.requests)


def parse_slo(text: str) -> tuple[float, float]:
    """``p90:2.5`` -> (90, 2.5): the sweep's latency objective (percentile, seconds)."""
    head, _, bound = text.partition(":")
    try:
        percentile = float(head.strip().lstrip("pP"))
        seconds = float(bound)
    except ValueError:
        raise ValueError(f"--slo {text!r}: expected pPCT:SECONDS, e.g. p90:2.5") from None
    if not 0 < percentile < 100 or not (seconds > 0 and math.isfinite(seconds)):
        raise ValueError(f"--slo {text!r}: percentile in (0, 100) and a positive bound")
    return percentile, seconds


def make_options(
    *,
    target: str,
    workload: Path,
    rate: float | None,
    rates: str | None,
    sweep: bool,
    profile: str,
    duration_s: float | None,
    requests: int | None,
    seed: int,
    slo: str | None = None,
    max_p99_issue_lag_ms: float = 10.0,
    in_flight_cap: int | None = None,
    max_rate: float = 1000.0,
) -> BenchOptions:
    """Check the combination of options; raise ValueError naming the conflict."""
    chosen = [name for name, given in (("--rate", rate is not None), ("--rates", rates),
                                       ("--sweep", sweep)) if given]  # fmt: skip
    if len(chosen) != 1:
        what = " and ".join(chosen) if chosen else "none of them"
        raise ValueError(f"give exactly one of --rate, --rates or --sweep (got {what})")
    if (duration_s is None) == (requests is None):
        raise ValueError("give exactly one of --duration or --requests")
    if duration_s is not None and not (duration_s > 0 and math.isfinite(duration_s)):
        raise ValueError("--duration must be a positive number of seconds")
    if requests is not None and requests < 1:
        raise ValueError("--requests must be at least 1")
    if rate is not None and not (rate > 0 and math.isfinite(rate)):
        raise ValueError("--rate must be positive and finite")
    if slo is not None and not sweep:
        raise ValueError("--slo only applies to --sweep")
    if in_flight_cap is not None and in_flight_cap < 1:
        raise ValueError("--in-flight-cap must be at least 1")
    if not (max_rate > 0 and math.isfinite(max_rate)):
        raise ValueError("--max-rate must be positive and finite")
    if not max_p99_issue_lag_ms > 0:
        raise ValueError("--max-issue-lag-ms must be positive")
    parsed_profile = parse_profile(profile)
    if sweep and parsed_profile.pattern is ArrivalPattern.TRACE:
        raise ValueError("--sweep varies the rate; a trace profile fixes it (use --rate)")
    if not workload.is_file():
        raise ValueError(f"--workload {workload}: no such file")
    return BenchOptions(
        target=target,
        workload=workload,
        rates=(rate,) if rate is not None else (parse_rates(rates) if rates else ()),
        sweep=sweep,
        profile=parsed_profile,
        duration_s=duration_s,
        requests=requests,
        seed=seed,
        in_flight_cap=in_flight_cap,
        max_p99_issue_lag_s=max_p99_issue_lag_ms / 1e3,
        slo=parse_slo(slo) if slo is not None else None,
        max_rate=max_rate,
    )
