"""Whether a golden fixture follows the rules it illustrates.

Row states: every row of a compiled fixture matrix is re-derived by the compiler's other path
(the columnar digests of the recorded runs, not the journals the fixture was compiled from), and
any row whose state, reasons, limitation or evidence differs is named. Gate results: the rules
every judge keeps (a deviation is never a passed case and always a limitation, a passed result
breaks no bound, an offload sweep with an invalid served point is not passed).
"""

from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path

from omniqual.compile.classes import compile_digests
from omniqual.compile.collect import collect_digests
from omniqual.domain.matrix import CompiledMatrix, CompiledRow, LoadedMatrix
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.result import GateResult
from omniqual.domain.rules import CurrentGate


def _view(row: CompiledRow) -> tuple[object, ...]:
    return (row.state, row.reasons, row.limitation, tuple(e.result_id for e in row.evidence))


def state_mismatches(
    fixture: CompiledMatrix,
    loaded: LoadedMatrix,
    gates: Mapping[str, CurrentGate],
    root: Path,
    at: datetime,
) -> list[str]:
    """Every fixture row the compiler would not give, from the runs under ``root/runs``."""
    derived = compile_digests(loaded, gates, collect_digests([root / "runs"], root), now=at)
    by_key = {row.key: row for row in derived.rows}
    problems = [f"{key}: not a row of the matrix definition"
                for key in {r.key for r in fixture.rows} - set(by_key)]  # fmt: skip
    for row in fixture.rows:
        real = by_key.get(row.key)
        if real is not None and _view(real) != _view(row):
            problems.append(
                f"{row.key}: fixture says {row.state.value} {row.reasons} (evidence "
                f"{[e.result_id for e in row.evidence]}); the compiler gives {real.state.value} "
                f"{real.reasons} (evidence {[e.result_id for e in real.evidence]})"
            )
    return problems


def _sweep_points(result: GateResult) -> list[dict[str, object]]:
    sweep = result.effective.get("sweep")
    points = sweep.get("points") if isinstance(sweep, dict) else None
    return [p for p in points if isinstance(p, dict)] if isinstance(points, list) else []


def result_problems(results: Iterable[GateResult]) -> list[str]:
    """Every result no judge would give for the evidence it carries."""
    problems: list[str] = []
    for r in results:
        where = f"{r.result_id} ({r.gate_id})"
        deviations = [c for c in r.cases if c.deviation]
        problems += [f"{where}: deviation case {c.id} marked passed" for c in deviations
                     if c.outcome is GateOutcome.PASSED]  # fmt: skip
        if deviations and not r.limitations:
            problems.append(f"{where}: reproduced deviations but no limitation recorded")
        if r.outcome is not GateOutcome.PASSED:
            continue
        problems += [f"{where}: passed with {m.name} outside its bound" for m in r.measurements
                     if m.ok is False]  # fmt: skip
        problems += [f"{where}: passed with failed case {c.id}" for c in r.cases
                     if c.outcome is GateOutcome.FAILED and not c.deviation]  # fmt: skip
        problems += [f"{where}: passed while served point {p.get('name')} is invalid"
                     for p in _sweep_points(r)
                     if not p.get("refused") and p.get("verdict") == "invalid"]  # fmt: skip
    return problems
