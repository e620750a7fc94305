"""Read the verdicts of stored runs for the stability table: each run's latest outcome per gate
on a row, the row states its evidence alone compiles to (the matrix's own rule table), the facts
of the build it ran (refused in one table when they differ) and how many sessions recorded it."""

from collections.abc import Sequence
from pathlib import Path

from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.domain.provenance import UNKNOWN
from omniqual.domain.rules import UNKNOWN_VALUES
from omniqual.domain.verdict_stability import RunVerdicts, StabilityTable, stability
from omniqual.engine.matrix_service import ProjectMatrix, compile_from_dirs, load_project_matrix
from omniqual.engine.single_gate import DEFAULT_MATRIX
from omniqual.evidence.run_reader import RunContents
from omniqual.evidence.store import find_runs, read_run
from omniqual.specs.project import find_project

BUILD_FIELDS: tuple[str, ...] = (
    "model_revision",
    "checkpoint_sha256",
    "vllm_omni_version",
    "vllm_omni_commit",
    "vllm_version",
    "serve_config_sha256",
)
"""Provenance fields that make a row's deployment another build. Not the served identity of a
URL deployment: it holds the server's start time, so every restart of one build differs."""


def build_facts(contents: RunContents) -> dict[str, frozenset[str]]:
    """The omniqual of every session, and per row every value its results record of
    :data:`BUILD_FIELDS` (a field a record leaves out says nothing; "unknown" is a value)."""
    facts: dict[str, set[str]] = {"omniqual": set()}
    for start in contents.starts:
        env = start.environment
        commit = f" at {env.git_commit}" if env.git_commit else ""
        facts["omniqual"].add(f"{env.omniqual_version}{commit}")
    for result in contents.results:
        for name in BUILD_FIELDS:
            value = getattr(result.provenance, name)
            if value is not None:
                known = UNKNOWN if value in UNKNOWN_VALUES else value
                facts.setdefault(f"{name} on {result.row}", set()).add(known)
    return {fact: frozenset(values) for fact, values in facts.items()}


def run_verdicts(project: ProjectMatrix, run_dir: Path) -> RunVerdicts:
    contents = read_run(run_dir)
    gates: dict[tuple[str, str], tuple[GateOutcome, str]] = {}
    for result in contents.results:  # journal order: a later result (a resume) wins
        gates[(result.gate_id, result.row)] = (result.outcome, next(iter(result.reasons), ""))
    compiled = compile_from_dirs(project, [run_dir], None)
    states: dict[str, CellState] = {row.key: row.state for row in compiled.rows}
    return RunVerdicts(contents.run_id, gates, states, build_facts(contents),
                       sessions=len(contents.starts))  # fmt: skip


def stability_of(matrix: Path | None, paths: Sequence[Path]) -> StabilityTable:
    """The stability table of every run under ``paths``, in the order the runs were created,
    judged by ``matrix`` (default: the project's embedded matrix). Raises
    :class:`~omniqual.domain.verdict_stability.MixedBuilds` for runs of different builds."""
    project = load_project_matrix(matrix or find_project().matrices / DEFAULT_MATRIX)
    return stability([run_verdicts(project, run_dir) for run_dir in find_runs(list(paths))])
