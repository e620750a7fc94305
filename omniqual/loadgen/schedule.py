"""Seeded, precomputed arrival schedules: Poisson, gamma (burstiness), constant rate, trace replay.

A schedule is a frozen tuple of offsets (seconds from the run start) computed before the run, so
the issuer never draws random numbers on its hot path and one seed always yields one plan.
Random draws use :class:`random.Random`, whose stream is stable across Python releases, rather
than numpy's generators, whose streams may change between numpy versions.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

TraceScalar = str | int | float | bool
PositiveInt = Annotated[int, Field(gt=0)]


class ArrivalPattern(StrEnum):
    POISSON = "poisson"
    GAMMA = "gamma"
    CONSTANT = "constant"
    TRACE = "trace"


class TraceError(ValueError):
    """A trace file line failed validation; the message names the source and line number."""


@dataclass(frozen=True, slots=True)
class TraceHint:
    """What one trace line pins for its slot: a mix entry name and/or shape overrides."""

    entry: str | None
    overrides: tuple[tuple[str, TraceScalar], ...]


@dataclass(frozen=True, slots=True)
class Schedule:
    """Planned arrival offsets plus the settings that produced them.

    ``window_s`` is the time the schedule is meant to cover: the requested duration, or the last
    arrival for count-bounded schedules. Rates derived from it compare like with like.
    """

    pattern: ArrivalPattern
    offsets_s: tuple[float, ...]
    window_s: float
    seed: int | None
    rate: float | None
    cv: float | None
    duration_s: float | None
    count: int | None
    trace_hints: tuple[TraceHint, ...] = ()

    def __len__(self) -> int:
        return len(self.offsets_s)

    @property
    def planned_rate(self) -> float:
        """Arrivals per second this particular draw actually contains (differs from ``rate``)."""
        return len(self.offsets_s) / self.window_s if self.window_s > 0 else 0.0


def _check_bounds(duration_s: float | None, count: int | None) -> None:
    if duration_s is None and count is None:
        raise ValueError("a schedule needs a duration_s, a count, or both")
    if duration_s is not None and not (duration_s > 0 and math.isfinite(duration_s)):
        raise ValueError(f"duration_s must be positive and finite, got {duration_s}")
    if count is not None and count <= 0:
        raise ValueError(f"count must be positive, got {count}")


def _accumulate(
    gap: Callable[[], float], duration_s: float | None, count: int | None
) -> tuple[tuple[float, ...], float]:
    """Sum gaps until the duration is covered or the count reached, whichever comes first."""
    total = 0.0

    def following() -> float:
        nonlocal total
        total += gap()
        return total

    return _accumulate_exact(following, duration_s, count)


def _accumulate_exact(
    following: Callable[[], float], duration_s: float | None, count: int | None
) -> tuple[tuple[float, ...], float]:
    """Take arrival times until the duration is covered or the count reached."""
    offsets: list[float] = []
    while count is None or len(offsets) < count:
        t = following()
        if duration_s is not None and t >= duration_s:
            break
        offsets.append(t)
    if duration_s is not None and (count is None or len(offsets) < count):
        window = duration_s
    else:
        window = offsets[-1] if offsets else 0.0
    return tuple(offsets), window


def _check_rate(rate: float) -> None:
    if not (rate > 0 and math.isfinite(rate)):
        raise ValueError(f"rate must be positive and finite, got {rate}")


def poisson_schedule(
    rate: float, *, seed: int, duration_s: float | None = None, count: int | None = None
) -> Schedule:
    """Poisson arrivals (exponential gaps, mean 1/rate), as MLPerf LoadGen's Server scenario."""
    _check_rate(rate)
    _check_bounds(duration_s, count)
    rng = random.Random(seed)
    offsets, window = _accumulate(lambda: rng.expovariate(rate), duration_s, count)
    return Schedule(ArrivalPattern.POISSON, offsets, window, seed, rate, 1.0, duration_s, count)


def gamma_schedule(
    rate: float,
    *,
    cv: float,
    seed: int,
    duration_s: float | None = None,
    count: int | None = None,
) -> Schedule:
    """Gamma-distributed gaps with coefficient of variation ``cv`` (1 = Poisson, >1 burstier).

    Shape k = 1/cv**2 and scale 1/(rate*k) keep the mean gap at 1/rate; vLLM's ``--burstiness``
    is the shape k, so burstiness b corresponds to cv = 1/sqrt(b).
    """
    _check_rate(rate)
    _check_bounds(duration_s, count)
    if not (cv > 0 and math.isfinite(cv)):
        raise ValueError(f"cv must be positive and finite, got {cv}")
    shape = 1.0 / (cv * cv)
    scale = 1.0 / (rate * shape)
    rng = random.Random(seed)
    offsets, window = _accumulate(lambda: rng.gammavariate(shape, scale), duration_s, count)
    return Schedule(ArrivalPattern.GAMMA, offsets, window, seed, rate, cv, duration_s, count)


def constant_schedule(
    rate: float, *, duration_s: float | None = None, count: int | None = None
) -> Schedule:
    """Evenly spaced arrivals at k/rate for k = 1, 2, ... (no randomness, so no seed)."""
    _check_rate(rate)
    _check_bounds(duration_s, count)
    # k / rate rather than a running sum, so offsets carry no accumulated rounding.
    ticks = itertools.count(1)
    offsets, window = _accumulate_exact(lambda: next(ticks) / rate, duration_s, count)
    return Schedule(ArrivalPattern.CONSTANT, offsets, window, None, rate, 0.0, duration_s, count)


class TraceLine(BaseModel):
    """One JSONL trace line. Unknown keys (prompts, SLOs, ...) are ignored, never echoed."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    timestamp: float = Field(ge=0, allow_inf_nan=False)
    entry: str | None = Field(default=None, min_length=1)
    width: PositiveInt | None = None
    height: PositiveInt | None = None
    num_frames: PositiveInt | None = None
    steps: PositiveInt | None = None
    prompt_tokens: PositiveInt | None = None
    seed: int | None = None

    def hint(self) -> TraceHint:
        pinned = self.model_dump(exclude={"timestamp", "entry"}, exclude_none=True)
        return TraceHint(self.entry, tuple(sorted(pinned.items())))


def _describe(exc: ValidationError) -> str:
    # Only locations and messages: input values may hold prompts and must not reach logs.
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or 'line'}: {err['msg']}" for err in exc.errors()
    )


def parse_trace(lines: Iterable[str], *, source: str = "<trace>") -> tuple[TraceLine, ...]:
    """Validate JSONL trace lines; blank lines are skipped; timestamps must not decrease."""
    parsed: list[TraceLine] = []
    previous = -math.inf
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            line = TraceLine.model_validate(json.loads(raw))
        except json.JSONDecodeError as exc:
            raise TraceError(f"{source}:{number}: not valid JSON ({exc.msg})") from None
        except ValidationError as exc:
            raise TraceError(f"{source}:{number}: {_describe(exc)}") from None
        if line.timestamp < previous:
            raise TraceError(
                f"{source}:{number}: timestamp {line.timestamp} is earlier than the previous "
                f"line's {previous}; traces must be sorted by time"
            )
        previous = line.timestamp
        parsed.append(line)
    if not parsed:
        raise TraceError(f"{source}: the trace holds no requests")
    return tuple(parsed)


def trace_schedule(
    lines: Iterable[TraceLine],
    *,
    time_scale: float = 1.0,
    duration_s: float | None = None,
    count: int | None = None,
) -> Schedule:
    """Replay trace timestamps relative to the first line, multiplied by ``time_scale``.

    ``time_scale`` converts units (0.001 for milliseconds) or compresses time (0.5 = twice as fast).
    """
    if not (time_scale > 0 and math.isfinite(time_scale)):
        raise ValueError(f"time_scale must be positive and finite, got {time_scale}")
    chosen = list(lines)
    if not chosen:
        raise ValueError("a trace schedule needs at least one line")
    origin = chosen[0].timestamp
    offsets: list[float] = []
    hints: list[TraceHint] = []
    for line in chosen:
        offset = (line.timestamp - origin) * time_scale
        if (duration_s is not None and offset >= duration_s) or (
            count is not None and len(offsets) >= count
        ):
            break
        offsets.append(offset)
        hints.append(line.hint())
    window = duration_s if duration_s is not None else offsets[-1]
    return Schedule(
        ArrivalPattern.TRACE,
        tuple(offsets),
        window,
        None,
        None,
        None,
        duration_s,
        count,
        tuple(hints),
    )


def load_trace(path: Path) -> tuple[TraceLine, ...]:
    with path.open(encoding="utf-8") as handle:
        return parse_trace(handle, source=str(path))


class ArrivalSpec(BaseModel):
    """The arrival process as written in a YAML plan; ``build()`` draws the schedule."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pattern: ArrivalPattern
    rate: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    cv: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    seed: int = 0
    duration_s: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    count: PositiveInt | None = None
    trace_path: Path | None = None
    time_scale: float = Field(default=1.0, gt=0, allow_inf_nan=False)

    @model_validator(mode="after")
    def _consistent(self) -> ArrivalSpec:
        if self.pattern is ArrivalPattern.TRACE:
            if self.trace_path is None:
                raise ValueError("pattern 'trace' needs trace_path")
        else:
            if self.rate is None:
                raise ValueError(f"pattern '{self.pattern}' needs rate")
            if self.duration_s is None and self.count is None:
                raise ValueError("give duration_s, count, or both")
        if self.pattern is ArrivalPattern.GAMMA and self.cv is None:
            raise ValueError("pattern 'gamma' needs cv")
        return self

    def build(self) -> Schedule:
        if self.pattern is ArrivalPattern.TRACE:
            assert self.trace_path is not None  # checked by the validator
            lines = load_trace(self.trace_path)
            return trace_schedule(
                lines, time_scale=self.time_scale, duration_s=self.duration_s, count=self.count
            )
        assert self.rate is not None  # checked by the validator
        if self.pattern is ArrivalPattern.POISSON:
            return poisson_schedule(
                self.rate, seed=self.seed, duration_s=self.duration_s, count=self.count
            )
        if self.pattern is ArrivalPattern.GAMMA:
            assert self.cv is not None
            return gamma_schedule(
                self.rate, cv=self.cv, seed=self.seed, duration_s=self.duration_s, count=self.count
            )
        return constant_schedule(self.rate, duration_s=self.duration_s, count=self.count)
