"""``omniqual recommend``: which qualified row to deploy for an objective, and why.

The rule table alone says what a row is (``compile.matrix``); this only chooses among the rows
it qualified. A row is eligible when

* the compiled matrix calls it `validated`, or `limited` (then the recommendation says so, with
  its limitation): a `not tested` row is never recommended, whatever passed on it;
* the results its state rests on (one deployment: same checkpoint, serve config, served
  identity ...) include a pass of every gate the Definition of Done asks of a recommended
  deployment of its kind (``definition_of_done.recommendation_gates``: its correctness gate,
  isolation, abort, fault injection, perf and soak);
* no other gate's latest current result on that deployment failed (a failed
  ``reference-parity`` beside a passed ``parity`` is a wrong output, whatever the row requires);
* the objective was measured on that deployment, read from the supporting results first:

  - ``latency``: the perf gate's ``latency_mean`` (lower), else the soak's
    ``below.latency_p50_s``;
  - ``throughput``: the perf gate's ``throughput_qps`` (higher), else the soak's
    ``saturation_rps``;
  - ``memory``: the perf gate's ``peak_memory_mb_max`` (lower), else the offload sweep's steady
    peak PSS (MiB).

Among eligible rows the best by the objective wins; the most memory-constrained eligible row
(least memory by the same figures, on its own deployment) is named on its own, as the recipe for
a small host. Rows that are not eligible are listed with every reason. Pure: the caller reads
the results; this compiles (or takes the compile of) the matrix and selects.
"""

from collections.abc import Iterable, Mapping, Sequence

from omniqual.compile.matrix import LocatedResult, compile_matrix
from omniqual.compile.recommend_rows import Reading, RowDeployment, row_deployments
from omniqual.domain.definition_of_done import missing_gates
from omniqual.domain.matrix import CompiledMatrix, LoadedMatrix
from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.domain.recommendation import (
    Candidate,
    Figure,
    NotEligible,
    Objective,
    Recommendation,
)
from omniqual.domain.result import GateResult
from omniqual.domain.rules import CurrentGate

__all__ = [
    "Candidate", "Figure", "NotEligible", "Objective", "Reading", "Recommendation",
    "RowDeployment", "figure", "recommend", "recommend_matrix",
]  # fmt: skip

RECOMMENDABLE = (CellState.VALIDATED, CellState.LIMITED)
MIB = 1024 * 1024
SHOWN_REASONS = 3
"""Compiled reasons quoted for a row the matrix does not qualify (the matrix has them all)."""

_SOURCES: Mapping[Objective, tuple[tuple[str, str, str, float], ...]] = {
    # (gate kind, measurement, unit, scale to the unit)
    Objective.LATENCY: (("perf", "latency_mean", "s", 1.0),
                        ("soak", "below.latency_p50_s", "s", 1.0)),
    Objective.THROUGHPUT: (("perf", "throughput_qps", "1/s", 1.0),
                           ("soak", "saturation_rps", "1/s", 1.0)),
    Objective.MEMORY: (("perf", "peak_memory_mb_max", "MiB", 1.0),
                       ("offload_sweep", "resident.peak_pss_steady", "MiB", 1 / MIB)),
}  # fmt: skip


def recommend_matrix(
    loaded: LoadedMatrix, gates: Mapping[str, CurrentGate],
    results: Iterable[tuple[GateResult, str]], *, compiled: CompiledMatrix | None = None,
    objectives: Sequence[Objective] = tuple(Objective),
) -> tuple[Recommendation, ...]:  # fmt: skip
    """One recommendation per objective over the matrix's rows, from located results (result,
    link; an empty link leaves the result id as its evidence). ``compiled``: the matrix already
    compiled from ``loaded``, ``gates`` and these results (the report's), else compiled here."""
    located = list(results)
    if compiled is None:
        compiled = compile_matrix(loaded, gates, (LocatedResult(r, link) for r, link in located))
    rows = row_deployments(loaded, gates, compiled, located)
    return tuple(recommend(rows, objective) for objective in objectives)


def _gaps(row: RowDeployment) -> list[str]:
    """Why ``row`` may not be recommended whatever the objective (empty: it may be)."""
    if row.state not in RECOMMENDABLE:
        quoted = "; ".join(row.reasons[:SHOWN_REASONS]) or "no reason recorded"
        return [f"the compiled matrix has it {row.state.value}: {quoted}"]
    if row.unread:
        return [f"results its state rests on were not read: {', '.join(row.unread)}"]
    if len({r.revisions for r in row.supporting}) > 1:
        # The rule table never rests a state on two deployments; a compile of other results
        # than these could: trust neither then.
        return ["the results its state rests on are of different deployments"]
    why: list[str] = []
    passed = [r.gate_id for r in row.supporting if r.outcome is GateOutcome.PASSED]
    missing = missing_gates(passed, row.wanted)
    if missing:
        why.append(f"DoD gates for a recommended deployment missing: {', '.join(missing)}")
    # A gate the row does not require still measured this very deployment: a recommendation
    # vouches for the deployment, so a failure recorded on it blocks (a reviewer would not
    # ship a row whose reference parity failed because only parity was listed).
    why += [f"{r.gate_id} failed on this deployment (result {r.result_id})"
            for r in row.beside if r.outcome is GateOutcome.FAILED]  # fmt: skip
    return why


def _passing(readings: Iterable[Reading], objective: Objective) -> Figure | None:
    found = list(readings)
    for kind, name, unit, scale in _SOURCES[objective]:
        for reading in found:
            if reading.gate_kind == kind and reading.outcome is GateOutcome.PASSED:
                value = reading.measurements.get(name)
                if value is not None:
                    return Figure(value * scale, unit, f"{reading.gate_id}:{name}",
                                  reading.result_id, reading.link)  # fmt: skip
    return None


def figure(row: RowDeployment, objective: Objective) -> Figure | None:
    """The objective's figure on the row's deployment: from the results its state rests on,
    else from another passing result of that same deployment (never of another)."""
    return _passing(row.supporting, objective) or _passing(row.beside, objective)


def _sources(objective: Objective) -> str:
    return ", ".join(f"{kind.replace('_', '-')}:{name}" for kind, name, _, _ in _SOURCES[objective])


def _candidate(row: RowDeployment, found: Figure) -> Candidate:
    evidence = tuple(r.ref for r in row.supporting)
    if found.result_id not in {r.result_id for r in row.supporting}:
        evidence = (*evidence, found.link or found.result_id)
    limitation = row.limitation if row.state is CellState.LIMITED else None
    return Candidate(row.row, row.recipe, found, evidence, row.state, limitation)


def recommend(rows: Sequence[RowDeployment], objective: Objective) -> Recommendation:
    ranked: list[Candidate] = []
    memory: list[Candidate] = []
    out: list[NotEligible] = []
    for row in rows:
        why = _gaps(row)
        found = figure(row, objective) if not why else None
        if not why and found is None:
            why.append(f"no passing measurement of {objective.value} on this deployment "
                       f"({_sources(objective)})")  # fmt: skip
        if why or found is None:
            out.append(NotEligible(row.row, row.recipe, tuple(why)))
            continue
        ranked.append(_candidate(row, found))
        held = figure(row, Objective.MEMORY)
        if held is not None:
            memory.append(_candidate(row, held))
    higher = objective is Objective.THROUGHPUT
    ranked.sort(key=lambda c: (-c.figure.value if higher else c.figure.value, c.row))
    memory.sort(key=lambda c: (c.figure.value, c.row))
    return Recommendation(objective, ranked[0] if ranked else None, tuple(ranked),
                          memory[0] if memory else None, tuple(out))  # fmt: skip
