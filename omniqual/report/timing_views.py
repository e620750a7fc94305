"""Where a run's wall time went, for the run summary: server start-ups by role, time per gate,
and the slowest gate runs, drawn from the run's ``timing.json`` (a :class:`RunTiming`).

A run without the file (older runs, or one killed before its plan ended) shows nothing here:
the timing is never inferred, and it never judges anything."""

from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from omniqual.domain.run import RunSummary
from omniqual.domain.timing import TIMING_FILE, RunTiming
from omniqual.report.blocks import Block, KeyValues, Table
from omniqual.report.redact import safe_text

SLOWEST = 10
"""Gate runs listed one by one (the rest are in the per-gate totals)."""
ROLE_HEADERS = ("Role", "Launches", "Seconds", "Mean s", "Share of wall")
SLOW_HEADERS = ("Gate", "Recipe", "Row", "Seconds", "Overlapped with")


def load_timings(runs: Sequence[RunSummary], artifact_dirs: Sequence[Path]) -> list[RunTiming]:
    """The recorded timing of each run whose directory (``<run>/artifacts``'s parent) holds one."""
    wanted = {run.run_id for run in runs}
    found: list[RunTiming] = []
    for artifacts in artifact_dirs:
        run_dir = artifacts.parent
        path = run_dir / TIMING_FILE
        if run_dir.name not in wanted or not path.is_file():
            continue
        try:
            timing = RunTiming.model_validate_json(path.read_bytes())
        except ValidationError:
            continue  # a damaged convenience file is not evidence; the journal still is
        if timing.run_id == run_dir.name:
            found.append(timing)
    return sorted(found, key=lambda t: t.started_at)


def _s(seconds: float) -> str:
    return f"{seconds:.1f}"


def _share(seconds: float, wall: float) -> str:
    return f"{seconds / wall:.0%}" if wall > 0 else "—"


def timing_blocks(timing: RunTiming) -> tuple[Block, ...]:
    wall = timing.wall_s
    roles = timing.startup_by_role()
    startup_total = sum(seconds for _, seconds in roles.values())
    gate_total = sum(g.seconds for g in timing.gates)
    beside = sum(g.seconds for g in timing.gates if g.overlapped_with is not None)
    summary = KeyValues(
        f"Where the time went (run {timing.run_id})",
        (
            ("Wall time of the plan", f"{_s(wall)} s"),
            ("Gates", f"{len(timing.gates)} runs, {_s(gate_total)} s"),
            ("Server start-ups", f"{len(timing.launches)} launches, {_s(startup_total)} s"),
            ("Gate time overlapped with a start-up", f"{_s(beside)} s"),
            ("Warm launches reused", str(sum(launch.reused for launch in timing.launches))),
        ),
    )
    by_gate = timing.seconds_by_gate()
    runs_of = {gate: sum(1 for g in timing.gates if g.gate == gate) for gate in by_gate}
    gate_rows = tuple(
        (safe_text(gate), str(runs_of[gate]), _s(seconds), _share(seconds, wall))
        for gate, seconds in by_gate.items()
    )
    role_rows = tuple(
        (role, str(count), _s(seconds), _s(seconds / count), _share(seconds, wall))
        for role, (count, seconds) in sorted(roles.items(), key=lambda kv: -kv[1][1])
    )
    slowest = sorted(timing.gates, key=lambda g: (-g.seconds, g.gate, g.row))[:SLOWEST]
    slow_rows = tuple(
        (safe_text(g.gate), safe_text(g.recipe), safe_text(g.row, limit=160), _s(g.seconds),
         safe_text(g.overlapped_with or ""))
        for g in slowest
    )  # fmt: skip
    return (
        summary,
        Table("Time by gate", ("Gate", "Runs", "Seconds", "Share of wall"), gate_rows),
        Table("Server start-ups by role", ROLE_HEADERS, role_rows),
        Table(f"Slowest gate runs (top {SLOWEST})", SLOW_HEADERS, slow_rows),
    )


def run_timing_blocks(
    runs: Sequence[RunSummary], artifact_dirs: Sequence[Path]
) -> tuple[Block, ...]:
    """The timing blocks of every run in the report that recorded its timing."""
    return tuple(b for t in load_timings(runs, artifact_dirs) for b in timing_blocks(t))
