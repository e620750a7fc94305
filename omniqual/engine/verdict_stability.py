"""Read the verdicts of stored runs for the stability table: each run's latest outcome per gate
on a row, and the row states its evidence alone compiles to (the matrix's own rule table)."""

from collections.abc import Sequence
from pathlib import Path

from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.domain.verdict_stability import RunVerdicts, StabilityTable, stability
from omniqual.engine.matrix_service import ProjectMatrix, compile_from_dirs, load_project_matrix
from omniqual.engine.single_gate import DEFAULT_MATRIX
from omniqual.evidence.store import find_runs, read_run
from omniqual.specs.project import find_project


def run_verdicts(project: ProjectMatrix, run_dir: Path) -> RunVerdicts:
    contents = read_run(run_dir)
    gates: dict[tuple[str, str], tuple[GateOutcome, str]] = {}
    for result in contents.results:  # journal order: a later result (a resume) wins
        gates[(result.gate_id, result.row)] = (result.outcome, next(iter(result.reasons), ""))
    compiled = compile_from_dirs(project, [run_dir], None)
    states: dict[str, CellState] = {row.key: row.state for row in compiled.rows}
    return RunVerdicts(contents.run_id, gates, states)


def stability_of(matrix: Path | None, paths: Sequence[Path]) -> StabilityTable:
    """The stability table of every run under ``paths``, in the order the runs were created,
    judged by ``matrix`` (default: the project's embedded matrix)."""
    project = load_project_matrix(matrix or find_project().matrices / DEFAULT_MATRIX)
    return stability([run_verdicts(project, run_dir) for run_dir in find_runs(list(paths))])
