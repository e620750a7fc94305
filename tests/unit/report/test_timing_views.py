"""The run-timing model and its run-summary blocks: totals by gate and by launch role, the
slowest gate runs, loading from a run directory (nothing shown when a run recorded none)."""

from datetime import UTC, datetime, timedelta
from pathlib import Path

from omniqual.domain.matrix import CompiledMatrix
from omniqual.domain.run import EnvironmentFingerprint, RunSummary
from omniqual.domain.timing import TIMING_FILE, GateTiming, LaunchTiming, RunTiming
from omniqual.report.blocks import KeyValues, Table
from omniqual.report.render import render_run_report
from omniqual.report.run_views import RunEvidence, run_report_view
from omniqual.report.timing_views import load_timings, run_timing_blocks, timing_blocks

T0 = datetime(2026, 12, 1, 0, 0, tzinfo=UTC)
RUN = "20261201T000000.000Z-abc123"


def _at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def _gate(gate: str, row: str, start: float, end: float, beside: str | None = None) -> GateTiming:
    return GateTiming(gate=gate, row=row, recipe="sd3-tiny", started_at=_at(start),
                      finished_at=_at(end), overlapped_with=beside)  # fmt: skip


TIMING = RunTiming(
    run_id=RUN, started_at=T0, finished_at=_at(200.0),
    launches=(
        LaunchTiming(recipe="sd3-tiny", role="target", started_at=_at(0), startup_s=14.0,
                     became_ready=True, stopped_at=_at(150), reused=1),
        LaunchTiming(recipe="sd3-tiny", role="reference", started_at=_at(150), startup_s=12.0,
                     became_ready=True, stopped_at=_at(190)),
        LaunchTiming(recipe="sd3-tiny-fp8", role="attempt", started_at=_at(190),
                     startup_s=6.0, became_ready=False, stopped_at=_at(196)),
    ),
    gates=(
        _gate("strict-load", "row=a", 0, 10, beside="start-up of sd3-tiny"),
        _gate("soak", "row=a", 14, 94),
        _gate("soak", "row=b", 94, 134),
        _gate("abort", "row=a", 134, 150),
    ),
)  # fmt: skip


def test_the_model_sums_gates_and_start_ups() -> None:
    assert TIMING.wall_s == 200.0
    assert TIMING.seconds_by_gate() == {"soak": 120.0, "abort": 16.0, "strict-load": 10.0}
    assert TIMING.startup_by_role() == {
        "target": (1, 14.0), "reference": (1, 12.0), "attempt": (1, 6.0)
    }  # fmt: skip
    assert TIMING.serial_gate_s() == 136.0
    assert TIMING.launches[0].alive_s == 150.0
    assert RunTiming.model_validate_json(TIMING.model_dump_json()) == TIMING
    assert TIMING.schema_version == 1 and TIMING.kind == "run-timing"


def test_the_blocks_show_totals_shares_and_the_slowest_runs() -> None:
    summary, by_gate, by_role, slowest = timing_blocks(TIMING)
    assert isinstance(summary, KeyValues)
    assert dict(summary.items)["Server start-ups"] == "3 launches, 32.0 s"
    assert dict(summary.items)["Gate time overlapped with a start-up"] == "10.0 s"
    assert dict(summary.items)["Warm launches reused"] == "1"
    assert isinstance(by_gate, Table) and by_gate.rows[0] == ("soak", "2", "120.0", "60%")
    assert isinstance(by_role, Table)
    assert [r[0] for r in by_role.rows] == ["target", "reference", "attempt"]
    assert by_role.rows[0] == ("target", "1", "14.0", "14.0", "7%")
    assert isinstance(slowest, Table)
    assert slowest.rows[0][:4] == ("soak", "sd3-tiny", "row=a", "80.0")
    assert slowest.rows[-1][-1] == "start-up of sd3-tiny"


def _summary(run_id: str) -> RunSummary:
    env = EnvironmentFingerprint(
        hostname_hash="0" * 64, os="Linux", kernel="6", machine="x86_64", cpu_model="cpu",
        cpu_count=2, memory_total_bytes=1 << 30, python="3.11", omniqual_version="0.1.0",
    )  # fmt: skip
    return RunSummary(run_id=run_id, started_at=T0, finished_at=_at(200), status="completed",
                      command=("omniqual", "run"), environment=env, results=())  # fmt: skip


def test_a_run_directory_with_timing_json_is_shown_and_one_without_is_not(
    tmp_path: Path,
) -> None:
    with_timing = tmp_path / RUN
    (with_timing / "artifacts").mkdir(parents=True)
    (with_timing / TIMING_FILE).write_text(TIMING.model_dump_json())
    other = tmp_path / "20261201T010000.000Z-def456"
    (other / "artifacts").mkdir(parents=True)
    dirs = (with_timing / "artifacts", other / "artifacts")
    runs = (_summary(RUN), _summary(other.name))
    assert load_timings(runs, dirs) == [TIMING]
    assert len(run_timing_blocks(runs, dirs)) == 4
    assert run_timing_blocks(runs[1:], dirs) == ()  # never inferred from results


def test_a_damaged_timing_file_is_skipped(tmp_path: Path) -> None:
    run_dir = tmp_path / RUN
    (run_dir / "artifacts").mkdir(parents=True)
    (run_dir / TIMING_FILE).write_text('{"run_id": 3}')
    assert load_timings((_summary(RUN),), (run_dir / "artifacts",)) == []


def test_the_run_summary_section_shows_the_breakdown_in_markdown_and_html(
    tmp_path: Path, every_state_matrix: CompiledMatrix
) -> None:
    run_dir = tmp_path / RUN
    (run_dir / "artifacts").mkdir(parents=True)
    (run_dir / TIMING_FILE).write_text(TIMING.model_dump_json())
    evidence = RunEvidence(title="t", matrix=every_state_matrix, runs=(_summary(RUN),),
                           artifact_dirs=(run_dir / "artifacts",))  # fmt: skip
    section = next(s for s in run_report_view(evidence).sections if s.number == 4)
    titles = [getattr(block, "title", "") for block in section.blocks]
    assert f"Where the time went (run {RUN})" in titles and "Time by gate" in titles
    for fmt in ("md", "html"):
        text = render_run_report(evidence, fmt)
        assert "Where the time went" in text and "Server start-ups by role" in text
        assert "start-up of sd3-tiny" in text
