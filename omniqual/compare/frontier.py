"""The latency–memory Pareto frontier of an offload sweep, and the point to recommend for a budget.

Pure: figures in, names out. Lower latency and lower memory are better, but only where two points
differ beyond their measured spread: one is faster than another only when its latency range (the
repetitions' min to max) lies wholly below the other's, and smaller only when its memory is lower
by more than the memory resolution (a fraction of the smaller figure). A point dominates another
when it is no worse on either figure and better on one in that sense, so points the measurement
cannot tell apart do not dominate each other: both stay on the frontier, named
:attr:`FrontierResult.indistinguishable`, and no recommendation picks between them (we never drop
or prefer a measured point by a tie-break the evidence does not support). Only valid points with
both figures, finite and non-negative, are judged; every other point is excluded with the reason.
When the data make no real trade-off, :attr:`FrontierResult.degenerate` says so in a sentence
that states what was measured; the frontier is never shaped into one it isn't.
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
    latency_range: tuple[float, float] | None = None
    """The repetitions' fastest and slowest latency (s); None: the median alone, no spread."""


@dataclass(frozen=True)
class FrontierResult:
    """The frontier (names, memory ascending), what each dominated point is beaten by, and why
    the rest were not judged."""

    frontier: tuple[str, ...]
    dominated: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    excluded: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    degenerate: str | None = None
    indistinguishable: tuple[tuple[str, str], ...] = ()
    """Frontier pairs that do not differ beyond their measured spread on either figure."""
    memory_resolution: float = 0.0


@dataclass(frozen=True)
class Recommendation:
    """The point to recommend for a budget, or None with the reason."""

    name: str | None
    reason: str


def pareto(
    points: Sequence[SweepPoint], *, baseline: str | None = None, memory_resolution: float = 0.0
) -> FrontierResult:
    """The non-dominated points of ``points``.

    ``baseline`` optionally names the resident (no-offload) point, so the degenerate sentences
    can say that offload saves nothing against it; the frontier itself does not depend on it.
    ``memory_resolution``: memory figures closer than this fraction are not told apart.
    """
    if not 0.0 <= memory_resolution < 1.0:
        raise ValueError(f"memory_resolution must be in [0, 1), not {memory_resolution!r}")
    res = memory_resolution
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
        (p for p in judged if not any(_dominates(other, p, res) for other in judged)), key=_order
    )
    dominated = {
        # A frontier point dominating it is named when there is one (the smallest, for a stable
        # answer); "not apart" is not transitive, so otherwise the smallest point that does.
        p.name: next(
            f.name
            for f in (*frontier, *sorted(judged, key=_order))
            if _dominates(f, p, res)
        )
        for p in sorted(judged, key=_order)
        if p not in frontier
    }
    together = tuple(
        (a.name, b.name)
        for i, a in enumerate(frontier)
        for b in frontier[i + 1 :]
        if _alike(a, b, res)
    )
    return FrontierResult(
        frontier=tuple(p.name for p in frontier),
        dominated=MappingProxyType(dominated),
        excluded=MappingProxyType(excluded),
        degenerate=_degenerate(judged, frontier, baseline, res),
        indistinguishable=together,
        memory_resolution=res,
    )


def recommend(
    result: FrontierResult, points: Sequence[SweepPoint], budget_bytes: float | None
) -> Recommendation:
    """The fastest frontier point whose memory is within ``budget_bytes``, when it is faster
    beyond the measured spread than every other frontier point that fits; else none, saying why.

    Without a budget every point fits.
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
        why = "no frontier point" if not result.frontier else "no frontier point fits the budget"
        return Recommendation(None, why)
    best = min(fitting, key=lambda p: (_latency(p), p.name))
    alike = sorted(
        p.name
        for p in fitting
        if p is not best and not _better(best, p, result.memory_resolution)[0]
    )
    if alike:
        return Recommendation(None, (
            f"indistinguishable: {best.name} is not faster than {', '.join(alike)} beyond their "
            "measured latency ranges, so the measurement picks none of them"
        ))  # fmt: skip
    return Recommendation(best.name, "the fastest frontier point within the budget")


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


def _range(point: SweepPoint) -> tuple[float, float]:
    return point.latency_range or (_latency(point), _latency(point))


def _better(a: SweepPoint, b: SweepPoint, resolution: float) -> tuple[bool, bool]:
    """Whether ``a`` is faster than ``b`` (its latency range wholly below) and whether it is
    smaller (lower by more than ``resolution`` of its own figure)."""
    faster = _range(a)[1] < _range(b)[0]
    smaller = _memory(b) - _memory(a) > resolution * _memory(a)
    return faster, smaller


def _dominates(a: SweepPoint, b: SweepPoint, resolution: float) -> bool:
    a_wins, b_wins = _better(a, b, resolution), _better(b, a, resolution)
    return any(a_wins) and not any(b_wins)


def _alike(a: SweepPoint, b: SweepPoint, resolution: float) -> bool:
    """Whether ``a`` and ``b`` differ on neither figure beyond their measured spread."""
    return not any(_better(a, b, resolution)) and not any(_better(b, a, resolution))


def _describe(point: SweepPoint) -> str:
    return f"{point.name} ({_latency(point):.3g} s, {_mib(_memory(point))})"


def _mib(value: float) -> str:
    return f"{value / 2**20:.1f} MiB"


def _degenerate(
    judged: list[SweepPoint], frontier: list[SweepPoint], baseline: str | None, res: float
) -> str | None:
    if not judged:
        return "no point has a valid latency and memory measurement: there is no frontier"
    if len(judged) == 1:
        return f"only one point was measured validly, {_describe(judged[0])}: no trade-off to show"
    base = next((p for p in judged if p.name == baseline), None)
    others = [p for p in judged if p is not base]
    if base is not None and all(_better(base, p, res)[1] for p in others):
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
    if all(_alike(a, b, res) for i, a in enumerate(frontier) for b in frontier[i + 1 :]):
        return (
            f"the {len(frontier)} frontier points are not apart: their latency ranges overlap and "
            f"their memory lies within {res:.0%} of each other, so the frontier is run-to-run "
            "variation, not a measured trade-off"
        )
    return None
