"""The ``effective["sweep"]`` block of an offload-sweep result: every point's raw row, the
frontier and dominance from :mod:`omniqual.compare.frontier` (points told apart only beyond their
repetitions' latency range and the spec's memory resolution), the recommendation for the spec's
memory budget (none, with the reason, where the measurement cannot pick), the sweep's one memory
unit, and the sentence on what the memory figure is on this host."""

from typing import Any

from omniqual.checks.offload_sweep.params import OffloadSweepParams
from omniqual.checks.offload_sweep.points import MemoryUnit, PointRecord, memory_unit
from omniqual.compare import SweepPoint, pareto, recommend

CPU_MEMORY_NOTE = (
    "No GPU was visible (NVML found no device), so the device an offload moves weights off is "
    "host memory itself: offloaded and resident weights live in the same RAM, and the memory "
    "figure is the peak PSS of the server's process tree. Offload cannot lower it here, and the "
    "staging copies it keeps may raise it."
)
GPU_MEMORY_NOTE = (
    "Memory is the peak GPU memory NVML attributes to the server's process tree over the load "
    "and steady phases, summed over devices, for every point alike (a point without NVML "
    "readings has no figure); host PSS and RSS are recorded beside it, since offload moves "
    "weights into them."
)


def sweep_point(record: PointRecord, unit: MemoryUnit = "pss") -> SweepPoint:
    """The frontier's view of a record: a point whose output differs leaves the frontier."""
    m = record.measured
    parity_failed = record.parity is not None and record.parity.outcome == "failed"
    reasons = record.reasons(unit) + (
        ["output differs from the reference"] if parity_failed else [])  # fmt: skip
    spread = (min(m.latencies_s), max(m.latencies_s)) if m is not None and m.latencies_s else None
    return SweepPoint(
        name=record.point.name,
        latency_s=m.median_s if m is not None else None,
        memory_bytes=record.memory_bytes(unit),
        valid=not reasons,
        note="; ".join(reasons),
        latency_range=spread,
    )


def sweep_block(records: dict[str, PointRecord], params: OffloadSweepParams) -> dict[str, Any]:
    unit = memory_unit(records.values())
    points = [sweep_point(r, unit) for r in records.values()]
    result = pareto(points, baseline=params.reference, memory_resolution=params.memory_resolution)
    pick = recommend(result, points, params.memory_budget_bytes)
    return {
        "points": [r.as_json(unit) for r in records.values()],
        "frontier": list(result.frontier),
        "dominated": dict(result.dominated),
        "indistinguishable": [list(pair) for pair in result.indistinguishable],
        "recommended": pick.name,
        "recommendation": pick.reason,
        "budget_bytes": params.memory_budget_bytes,
        "degenerate": result.degenerate,
        "memory_unit": unit,
        "memory_note": GPU_MEMORY_NOTE if unit == "nvml" else CPU_MEMORY_NOTE,
        "resolution_note": resolution_note(records, params.memory_resolution, unit),
        "reference": params.reference,
        "excluded": dict(result.excluded),
    }


def resolution_note(records: dict[str, PointRecord], memory_resolution: float,
                    unit: MemoryUnit = "pss") -> str | None:  # fmt: skip
    """A sentence when no valid point differs from another beyond what the run can resolve:
    every latency range overlaps every other and every memory figure lies within
    ``memory_resolution`` (a fraction) of the smallest. The frontier is then an ordering of
    noise, and the sentence says so instead of leaving it to look like a trade-off."""
    measured = [r for r in records.values() if r.valid(unit) and r.measured is not None]
    ranges = [(min(r.measured.latencies_s), max(r.measured.latencies_s))
              for r in measured if r.measured is not None]  # fmt: skip
    memory = [m for m in (r.memory_bytes(unit) for r in measured) if m is not None]
    if len(ranges) < 2 or len(memory) != len(ranges):
        return None
    overlap = max(low for low, _ in ranges) <= min(high for _, high in ranges)
    spread = (max(memory) - min(memory)) / min(memory) if min(memory) > 0 else float("inf")
    if not overlap or spread > memory_resolution:
        return None
    return (
        f"The {len(ranges)} measured points are not apart: their latency ranges overlap and their"
        f" memory figures lie within {spread:.1%} of each other (resolution"
        f" {memory_resolution:.0%}), so which of them is on the frontier is run-to-run"
        " variation, not a measured trade-off."
    )
