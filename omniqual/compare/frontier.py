"""The latency–memory Pareto frontier of an offload sweep, and the point to recommend for a budget.

Pure: figures in, names out. Lower latency and lower memory are better. A point dominates
another when it is no worse on both figures and strictly better on one, so two points with
exactly the same latency and memory do not dominate each other: both stay on the frontier (we
never drop a measured point by a tie-break the evidence does not support). Only valid points
with both figures, finite and non-negative, are judged; every other point is excluded with the
reason. When the data make no real trade-off, :attr:`FrontierResult.degenerate` says so in a
sentence that states what was measured; the frontier is never shaped into one it isn't.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType


@dataclass(frozen=True)
class SweepPoint:
    """One measured point of a sweep: its median latency (s) and peak memory (bytes)."""

    name: str
    latency_s: float | None
    memory_bytes: float | None
    valid: bool
    note: str = ""


@dataclass(frozen=True)
class FrontierResult:
    """The frontier (names, memory ascending), what each dominated point is beaten by, and why
    the rest were not judged."""

    frontier: tuple[str, ...]
    dominated: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    excluded: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    degenerate: str | None = None


def pareto(points: Sequence[SweepPoint], *, baseline: str | None = None) -> FrontierResult:
    """The non-dominated points of ``points``.

    ``baseline`` optionally names the resident (no-offload) point, so the degenerate sentences
    can say that offload saves nothing against it; the frontier itself does not depend on it.
    """
    names = [point.name for point in points]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ValueError(f"sweep point names must be unique; repeated: {', '.join(duplicates)}")
    excluded: dict[str, str] = {}
    judged: list[SweepPoint] = []
    for point in points:
        reason = _exclusion(point)
        if reason is None:
            judged.append(point)
        else:
            excluded[point.name] = reason
    frontier = sorted(
        (p for p in judged if not any(_dominates(other, p) for other in judged)), key=_order
    )
    dominated = {
        # Dominance is transitive and the set finite, so some frontier point always dominates a
        # dominated one; naming the smallest such keeps the answer stable.
        p.name: next(f.name for f in frontier if _dominates(f, p))
        for p in sorted(judged, key=_order)
        if p not in frontier
    }
    return FrontierResult(
        frontier=tuple(p.name for p in frontier),
        dominated=MappingProxyType(dominated),
        excluded=MappingProxyType(excluded),
        degenerate=_degenerate(judged, frontier, baseline),
    )


def recommend(
    result: FrontierResult, points: Sequence[SweepPoint], budget_bytes: float | None
) -> str | None:
    """The fastest frontier point whose memory is within ``budget_bytes``; None if none fits.

    Without a budget every point fits, so the answer is the fastest frontier point.
    """
    by_name = {point.name: point for point in points}
    missing = [name for name in result.frontier if name not in by_name]
    if missing:
        raise ValueError(f"frontier names absent from the points: {', '.join(missing)}")
    fitting = [
        by_name[name]
        for name in result.frontier
        if budget_bytes is None or _memory(by_name[name]) <= budget_bytes
    ]
    if not fitting:
        return None
    # On a frontier equal latencies mean equal memory (an exact tie); the name breaks it.
    return min(fitting, key=lambda p: (_latency(p), p.name)).name


def _exclusion(point: SweepPoint) -> str | None:
    if not point.valid:
        return f"invalid: {point.note}" if point.note else "invalid measurement (no reason given)"
    for label, value in (("latency", point.latency_s), ("memory", point.memory_bytes)):
        if value is None:
            return f"no {label} figure"
        if not math.isfinite(value) or value < 0:
            return f"{label} figure {value!r} is not a finite non-negative number"
    return None


def _latency(point: SweepPoint) -> float:
    assert point.latency_s is not None  # only judged points reach here
    return point.latency_s


def _memory(point: SweepPoint) -> float:
    assert point.memory_bytes is not None  # only judged points reach here
    return point.memory_bytes


def _order(point: SweepPoint) -> tuple[float, float, str]:
    return (_memory(point), _latency(point), point.name)


def _dominates(a: SweepPoint, b: SweepPoint) -> bool:
    no_worse = _latency(a) <= _latency(b) and _memory(a) <= _memory(b)
    return no_worse and (_latency(a) < _latency(b) or _memory(a) < _memory(b))


def _describe(point: SweepPoint) -> str:
    return f"{point.name} ({_latency(point):.3g} s, {_mib(_memory(point))})"


def _mib(value: float) -> str:
    return f"{value / 2**20:.1f} MiB"


def _degenerate(
    judged: list[SweepPoint], frontier: list[SweepPoint], baseline: str | None
) -> str | None:
    if not judged:
        return "no point has a valid latency and memory measurement: there is no frontier"
    if len(judged) == 1:
        return f"only one point was measured validly, {_describe(judged[0])}: no trade-off to show"
    base = next((p for p in judged if p.name == baseline), None)
    others = [p for p in judged if p is not base]
    if base is not None and all(_memory(p) > _memory(base) for p in others):
        low = min(_memory(p) for p in others)
        high = max(_memory(p) for p in others)
        span = _mib(low) if low == high else f"{_mib(low)} to {_mib(high)}"
        sentence = (
            f"every offload point uses more memory than the resident point {_describe(base)}: "
            f"{len(others)} offload point(s) peaked at {span}"
        )
        if frontier == [base]:
            sentence += "; resident is also the fastest, so offload costs latency and saves none"
        return sentence
    if len(frontier) == 1:
        (best,) = frontier
        return (
            f"one point dominates every other: {_describe(best)} is both the fastest and the "
            f"smallest of {len(judged)} measured points, so there is no trade-off here"
        )
    if len({(_latency(p), _memory(p)) for p in frontier}) == 1:
        return (
            f"the {len(frontier)} frontier points measured exactly the same latency and memory, "
            f"{_latency(frontier[0]):.3g} s and {_mib(_memory(frontier[0]))}: they are tied"
        )
    return None
