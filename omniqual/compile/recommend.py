"""``omniqual recommend``: which qualified row to deploy for an objective, and why.

A row is eligible when its latest results show it passed correctness (``reference-parity`` or
``parity``), the abort/error cleanup gate (``abort``, and ``fault-injection`` when the row
requires it), the ``soak`` and, when the row requires it or the evidence holds a result of it,
``isolation``; and when some passing result measured the objective. Among eligible rows the best
by the objective wins:

* ``latency``: the perf gate's ``latency_mean`` (lower), else the soak's ``below.latency_p50_s``;
* ``throughput``: the perf gate's ``throughput_qps`` (higher), else the soak's ``saturation_rps``;
* ``memory``: the perf gate's ``peak_memory_mb_max`` (lower), else the offload sweep's steady
  peak PSS (MiB).

The most memory-constrained eligible row (least memory by the same figures) is named on its own,
as the recipe for a small host. Rows that are not eligible are listed with every reason. Pure:
the caller reads the results; this only selects.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from omniqual.domain.matrix import LoadedMatrix
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.recommendation import (
    Candidate,
    Figure,
    NotEligible,
    Objective,
    Recommendation,
)
from omniqual.domain.result import GateResult

__all__ = [
    "Candidate", "Figure", "GateFact", "NotEligible", "Objective", "Recommendation", "RowFacts",
    "facts_from_results", "figure", "recommend", "recommend_matrix", "row_inputs",
]  # fmt: skip

CORRECTNESS = ("reference-parity", "parity")
CLEANUP = ("abort",)
MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class GateFact:
    """The latest result of one gate on one row, as the selection reads it."""

    gate_id: str
    gate_kind: str
    outcome: GateOutcome
    result_id: str
    run_id: str
    finished_at: datetime
    measurements: Mapping[str, float]
    link: str = ""


@dataclass(frozen=True, slots=True)
class RowFacts:
    row: str
    recipe: str | None
    requires: tuple[str, ...]
    latest: Mapping[str, GateFact]


_SOURCES: Mapping[Objective, tuple[tuple[str, str, str, float], ...]] = {
    # (gate kind, measurement, unit, scale to the unit)
    Objective.LATENCY: (("perf", "latency_mean", "s", 1.0),
                        ("soak", "below.latency_p50_s", "s", 1.0)),
    Objective.THROUGHPUT: (("perf", "throughput_qps", "1/s", 1.0),
                           ("soak", "saturation_rps", "1/s", 1.0)),
    Objective.MEMORY: (("perf", "peak_memory_mb_max", "MiB", 1.0),
                       ("offload_sweep", "resident.peak_pss_steady", "MiB", 1 / MIB)),
}  # fmt: skip


def facts_from_results(results: Iterable[tuple[GateResult, str]],
                       rows: Mapping[str, tuple[str | None, tuple[str, ...]]],
                       ) -> list[RowFacts]:  # fmt: skip
    """Per planned row (key -> (recipe, requires)), the latest result of each gate."""
    latest: dict[str, dict[str, GateFact]] = {key: {} for key in rows}
    for result, link in results:
        held = latest.get(result.row)
        if held is None:
            continue
        kept = held.get(result.gate_id)
        if kept is not None and kept.finished_at > result.finished_at:
            continue
        held[result.gate_id] = GateFact(
            result.gate_id, result.gate_kind, result.outcome, result.result_id, result.run_id,
            result.finished_at, {m.name: m.value for m in result.measurements}, link)  # fmt: skip
    return [RowFacts(key, rows[key][0], rows[key][1], latest[key]) for key in rows]


def row_inputs(loaded: LoadedMatrix, keys: Iterable[str] | None = None,
               ) -> dict[str, tuple[str | None, tuple[str, ...]]]:  # fmt: skip
    """Row key -> (recipe, requires) for the selection, from the matrix definition; with
    ``keys`` (e.g. a compiled matrix's rows), only those rows, in that order."""
    planned = {str(r.key): (r.spec.recipe, tuple(r.spec.requires)) for r in loaded.rows}
    if keys is None:
        return planned
    return {key: planned.get(key, (None, ())) for key in keys}


def recommend_matrix(loaded: LoadedMatrix, results: Iterable[tuple[GateResult, str]],
                     keys: Iterable[str] | None = None,
                     objectives: Sequence[Objective] = tuple(Objective),
                     ) -> tuple[Recommendation, ...]:  # fmt: skip
    """One recommendation per objective over the matrix's rows, from located results
    (result, link; an empty link leaves the result id as its evidence)."""
    facts = facts_from_results(results, row_inputs(loaded, keys))
    return tuple(recommend(facts, objective) for objective in objectives)


def _gaps(row: RowFacts) -> tuple[list[str], list[GateFact]]:
    why: list[str] = []
    passed: list[GateFact] = []

    def need(gates: Sequence[str], what: str) -> None:
        facts = [row.latest[g] for g in gates if g in row.latest]
        ok = [f for f in facts if f.outcome is GateOutcome.PASSED]
        if ok:
            passed.append(ok[0])
        elif facts:
            why.append(f"{what}: {facts[0].gate_id} {facts[0].outcome.value}")
        else:
            why.append(f"{what}: no result of {' or '.join(gates)}")

    need(CORRECTNESS, "correctness")
    need(CLEANUP, "abort/error cleanup")
    if "fault-injection" in row.requires:
        need(("fault-injection",), "fault injection")
    need(("soak",), "soak")
    if "isolation" in row.requires or "isolation" in row.latest:
        need(("isolation",), "isolation")
    return why, passed


def figure(row: RowFacts, objective: Objective) -> Figure | None:
    """The objective's figure from the row's passing results, in order of preference."""
    for kind, name, unit, scale in _SOURCES[objective]:
        for fact in row.latest.values():
            if fact.gate_kind == kind and fact.outcome is GateOutcome.PASSED:
                value = fact.measurements.get(name)
                if value is not None:
                    return Figure(value * scale, unit, f"{fact.gate_id}:{name}", fact.result_id,
                                  fact.link)  # fmt: skip
    return None


def recommend(rows: Sequence[RowFacts], objective: Objective) -> Recommendation:
    ranked: list[Candidate] = []
    memory: list[Candidate] = []
    out: list[NotEligible] = []
    for row in rows:
        why, passed = _gaps(row)
        found = figure(row, objective)
        if found is None:
            why.append(f"no passing perf/soak measurement of {objective.value}")
        if why:
            out.append(NotEligible(row.row, row.recipe, tuple(why)))
            continue
        assert found is not None
        evidence = (*(f.link or f.result_id for f in passed), found.link or found.result_id)
        ranked.append(Candidate(row.row, row.recipe, found, evidence))
        held = figure(row, Objective.MEMORY)
        if held is not None:
            memory.append(Candidate(row.row, row.recipe, held, evidence))
    higher = objective is Objective.THROUGHPUT
    ranked.sort(key=lambda c: (-c.figure.value if higher else c.figure.value, c.row))
    memory.sort(key=lambda c: (c.figure.value, c.row))
    return Recommendation(objective, ranked[0] if ranked else None, tuple(ranked),
                          memory[0] if memory else None, tuple(out))  # fmt: skip
