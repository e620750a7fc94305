"""Soak plots, stage accounting and abort cleanup figures in the run report: values read off the
records, plots present as inline SVG in HTML (captions only in Markdown), data tables for CSV,
and sections that say what would fill them when nothing was recorded."""

from pathlib import Path

from omniqual.domain.abort_cleanup import (
    AbortCleanup,
    CleanupBounds,
    CutWork,
    JobCleanup,
    ResourceFigures,
)
from omniqual.domain.evidence import Artifact
from omniqual.domain.outcomes import CellState
from omniqual.domain.result import GateResult
from omniqual.domain.soak_series import MemoryPoint, PhaseSeries, RateWindow, SoakSeries
from omniqual.domain.stage_accounting import PROFILER_FLAG, account
from omniqual.report.abort_views import abort_blocks
from omniqual.report.blocks import Bullets, KeyValues, Plot, Table
from omniqual.report.links import EvidenceLinks
from omniqual.report.render import render_run_report
from omniqual.report.run_views import RunEvidence, run_report_view
from omniqual.report.soak_plot import cdf_svg
from omniqual.report.soak_views import quantile, soak_blocks, soak_tables
from omniqual.report.stage_views import FILL, STAGE_FILL, stage_blocks
from tests.unit.report.conftest import MatrixFactory, ResultFactory, RowFactory

MIB = 2**20
ROW = "model=flux;task=t2i;quantization=bf16;hardware=h200"
LABELS = {ROW: "#1"}
SHA = "cd" * 32


def series() -> SoakSeries:
    below = PhaseSeries(
        name="below", factor=0.5, offered_rps=2.0, start_s=3.0, duration_s=10.0, window_s=5.0,
        windows=[RateWindow(start_s=0, end_s=5, offered_rps=2.0, issued_rps=2.0,
                            achieved_rps=1.8),
                 RateWindow(start_s=5, end_s=10, offered_rps=2.0, issued_rps=2.0,
                            achieved_rps=2.2)],
        latency_cdf=[(0.1 * k, k / 10) for k in range(1, 11)], ok=20, failed=1, injected=2,
    )  # fmt: skip
    above = PhaseSeries(
        name="<b>above</b>", factor=1.2, offered_rps=4.8, start_s=14.0, duration_s=8.0,
        window_s=4.0, windows=[RateWindow(start_s=0, end_s=4, offered_rps=4.8, issued_rps=4.5,
                                          achieved_rps=3.0)],
        latency_cdf=[(2.0, 0.5), (4.0, 1.0)], ok=24, failed=0, injected=0,
    )  # fmt: skip
    memory = [MemoryPoint(elapsed_s=float(t), memory_bytes=(900 + t) * MIB, open_fds=10)
              for t in range(0, 24, 2)]  # fmt: skip
    return SoakSeries(memory_source="process-tree", phases=[below, above], memory=memory,
                      compact=True)  # fmt: skip


def soak_result(make_result: ResultFactory, **effective: object) -> GateResult:
    stages = {"P.text_encoder.forward": 0.1, "P.diffuse": 0.5, "P.vae.decode": 0.2,
              "queue_wait": 0.05, "stage_0_gen": 0.8}  # fmt: skip
    data: dict[str, object] = {"soak_series": series().model_dump(mode="json"),
            "stage_accounting": account([(1.0, stages, 900.0), (1.2, stages, 910.0)]
                                        ).model_dump(mode="json")}  # fmt: skip
    data.update(effective)
    artifact = Artifact(sha256=SHA, size=1, media_type="application/json", role="raw-series",
                        name="soak-series.json")  # fmt: skip
    return make_result("soak", "soak", effective=data, artifacts=(artifact,))


def test_phase_table_values_and_links_to_the_series_artifact(
    make_result: ResultFactory, tmp_path: Path
) -> None:
    links = EvidenceLinks({"run-1": tmp_path / "run-1"}, tmp_path)
    blocks = soak_blocks([soak_result(make_result)], LABELS, links)
    table = blocks[0]
    assert isinstance(table, Table) and table.title == "Soak phases: #1 (soak)"
    below, above = table.rows
    # Offered, achieved (ok / duration), ok, not ok, injected, p50, p90, p99, max.
    assert below[:11] == ("below", "0.5", "2", "2", "20", "1", "2", "0.5", "0.9", "1", "1")
    assert above[0] == "<b>above</b>" and above[7] == "2" and above[10] == "4"
    assert table.links == (f"run-1/artifacts/{SHA}",) * 2
    assert "peak 922.0 MiB" in table.note
    plots = [b for b in blocks if isinstance(b, Plot)]
    assert [p.title.split(":")[0] for p in plots] == [
        "Latency CDF per phase", "Offered vs achieved rate", "Memory over time"]
    assert all(p.svg.startswith("<svg") and p.svg.endswith("</svg>") for p in plots)


def test_quantile_reads_the_cdf_and_the_svg_is_deterministic() -> None:
    below = series().phases[0]
    assert quantile(below, 0.5) == 0.5 and quantile(below, 1.0) == 1.0
    assert cdf_svg(series()) == cdf_svg(series())
    # Phase names are text inside the SVG, escaped by matplotlib's writer.
    assert "&lt;b&gt;above&lt;/b&gt;" in cdf_svg(series()) and "<b>" not in cdf_svg(series())


def test_data_tables_hold_every_plotted_point(make_result: ResultFactory) -> None:
    cdf, windows, memory = soak_tables([soak_result(make_result)], LABELS)
    assert len(cdf.rows) == 12 and cdf.rows[0] == ("below", "0.1", "0.1")
    assert windows.rows[2] == ("<b>above</b>", "14", "18", "4.8", "4.5", "3")
    assert len(memory.rows) == 12 and memory.rows[0][1] == str(900 * MIB)


def test_a_result_without_a_series_draws_nothing_and_a_malformed_one_says_so(
    make_result: ResultFactory,
) -> None:
    assert soak_blocks([make_result("soak", "soak")], LABELS) == ()
    assert soak_blocks([make_result("x", "parity", effective={"soak_series": {}})], LABELS) == ()
    bad = make_result("soak", "soak", effective={"soak_series": {"phases": [{"name": 1}]}})
    (block,) = soak_blocks([bad], LABELS)
    assert isinstance(block, KeyValues) and "malformed" in block.items[0][1]


def test_stage_table_means_and_rest(make_result: ResultFactory) -> None:
    (table,) = stage_blocks([soak_result(make_result)], LABELS)
    assert isinstance(table, Table)
    row = dict(zip(table.headers, table.rows[0], strict=True))
    assert row["Requests (reporting / OK)"] == "2 / 2"
    assert row["Denoise mean / p50 (s)"] == "0.5 / 0.5 (n=2)"
    assert row["Queue mean / p50 (s)"] == "0.05 / 0.05 (n=2)"
    # Rest = latency − (0.05 + 0.1 + 0.5 + 0.2) per request: 0.15 and 0.35.
    assert row["Rest mean / p50 (s)"] == "0.25 / 0.25 (n=2)"
    assert row["Server peak memory max / mean (MB)"] == "910.0 / 905.0"
    assert row["Other reported names"] == "stage_0_gen"


def test_stages_missing_without_the_profiler_say_which_flag(make_result: ResultFactory) -> None:
    plain = account([(0.04, {"queue_wait": 0.0002, "stage_0_gen": 0.03}, None)])
    result = make_result("soak", "soak", effective={"stage_accounting": plain.model_dump()})
    (table,) = stage_blocks([result], LABELS)
    assert isinstance(table, Table) and PROFILER_FLAG in table.note
    row = dict(zip(table.headers, table.rows[0], strict=True))
    assert row["Denoise mean / p50 (s)"] == "not reported"
    silent = make_result("soak", "soak", effective={"stage_accounting": account(
        [(0.04, {}, None)]).model_dump()})  # fmt: skip
    (table,) = stage_blocks([silent], LABELS)
    assert isinstance(table, Table) and "reported no stage_durations" in table.note


def test_no_stage_record_names_the_gate_and_flag_or_leaves_it_to_the_section(
    make_result: ResultFactory,
) -> None:
    (block,) = stage_blocks([make_result("g1", "parity")], LABELS)
    assert isinstance(block, Bullets) and block.items == (FILL,)
    assert "`soak`" in FILL and PROFILER_FLAG in FILL and STAGE_FILL in FILL
    assert stage_blocks([make_result("g1", "parity")], LABELS, say_missing=False) == ()


def cleanup() -> AbortCleanup:
    return AbortCleanup(
        boundary="step", signals=["process-tree CPU time"], solo_s=0.3, idle_cpu_rate=0.02,
        busy_cpu_rate=0.95, resource_source="process-tree",
        cuts=[CutWork(case="disconnect-middle", window_s=0.5, cpu_s=0.25, busy_s=0.1,
                      extra_executions=0, ran_on_s=0.12, allowed_s=0.4),
              CutWork(case="<i>queued</i>", queued=True, window_s=0.6)],
        jobs=[JobCleanup(case="cancel-middle", delete_status=200, after="gone (404)",
                         content_status=404, terminal_states=[])],
        baseline=ResourceFigures(memory_bytes=900 * MIB, open_fds=10, temp_files=0),
        after=ResourceFigures(memory_bytes=912 * MIB, open_fds=10, temp_files=2),
        settle_s=0.6, settle_max_s=15.0,
        bounds=CleanupBounds(memory_growth_mib=64, fd_growth=8, temp_file_growth=0,
                             gpu_memory_growth_mib=64),
    )  # fmt: skip


def test_abort_cleanup_figures(make_result: ResultFactory) -> None:
    result = make_result("abort", "abort", effective={"abort_cleanup": cleanup().model_dump()})
    summary, cuts, resources, jobs, plot = abort_blocks([result], LABELS)
    assert isinstance(jobs, Table)
    assert jobs.rows == (("cancel-middle", "200", "gone (404)", "404", "none", "no"),)
    assert isinstance(summary, KeyValues) and ("abort boundary", "step") in summary.items
    assert isinstance(cuts, Table) and cuts.rows[0] == (
        "disconnect-middle", "no", "0.5", "0.5", "0.02", "0.1", "0", "0.12", "0.4")
    assert cuts.rows[1][:2] == ("<i>queued</i>", "yes") and cuts.rows[1][7] == "—"
    assert isinstance(resources, Table)
    assert resources.rows[0] == ("memory (MiB, process-tree)", "900", "912", "+12", "+64")
    assert resources.rows[2] == ("temp files", "0", "2", "+2", "+0")
    assert resources.rows[3][3] == "not measured"
    assert isinstance(plot, Plot) and plot.svg.startswith("<svg")
    assert abort_blocks([make_result("abort", "abort")], LABELS) == ()


def _evidence(make_result: ResultFactory, make_matrix: MatrixFactory,
              make_row: RowFactory) -> RunEvidence:  # fmt: skip
    abort = make_result("abort", "abort", effective={"abort_cleanup": cleanup().model_dump()})
    return RunEvidence(title="soak", matrix=make_matrix(make_row(CellState.VALIDATED)),
                       results=(soak_result(make_result), abort))  # fmt: skip


def test_sections_6_7_8_carry_the_figures_and_html_inlines_escaped_svg(
    make_result: ResultFactory, make_matrix: MatrixFactory, make_row: RowFactory
) -> None:
    evidence = _evidence(make_result, make_matrix, make_row)
    sections = {s.number: s for s in run_report_view(evidence).sections}
    assert [b.title for b in sections[6].blocks if isinstance(b, Plot)] == [
        "Latency CDF per phase: #1 (soak)", "Offered vs achieved rate: #1 (soak)",
        "Memory over time: #1 (soak)"]  # fmt: skip
    assert sections[7].blocks[0].title == "Stage accounting (server stage_durations)"
    assert any(b.title == "Work after each cut vs allowance: #1 (abort)" and isinstance(b, Plot)
               for b in sections[8].blocks)  # fmt: skip
    html = render_run_report(evidence, "html")
    assert html.count("<svg") == 4 and "<?xml" not in html and "<!--" not in html
    assert "<b>above</b>" not in html and "<i>queued</i>" not in html
    assert "&lt;b&gt;above&lt;/b&gt;" in html and "&lt;i&gt;queued&lt;/i&gt;" in html
    assert "<script" not in html and 'src="http' not in html
    markdown = render_run_report(evidence, "md")
    assert "<svg" not in markdown and "base64" not in markdown
    assert "Fraction of plain requests answered OK within a latency" in markdown
    assert "Soak phases: #1 (soak)" in markdown and "0.25 / 0.25 (n=2)" in markdown
    assert render_run_report(evidence, "html") == html  # byte-stable


def test_without_stage_records_section_7_is_empty_and_names_the_gate_and_flag(
    make_result: ResultFactory, make_matrix: MatrixFactory, make_row: RowFactory
) -> None:
    evidence = RunEvidence(title="t", matrix=make_matrix(make_row(CellState.VALIDATED)),
                           results=(make_result("g1", "parity"),))  # fmt: skip
    section = next(s for s in run_report_view(evidence).sections if s.number == 7)
    assert section.empty and STAGE_FILL in section.empty_note


def test_the_plotted_points_are_exported_as_csv_beside_the_printed_tables(
    make_result: ResultFactory, make_matrix: MatrixFactory, make_row: RowFactory
) -> None:
    from omniqual.report.csv_export import csv_files

    view = run_report_view(_evidence(make_result, make_matrix, make_row))
    files = csv_files(view)
    cdf = next(text for name, text in files.items() if name.startswith("06-soak-latency-cdf"))
    assert cdf.splitlines()[0] == "Phase,Latency (s),Fraction ≤"
    assert len(cdf.splitlines()) == 1 + 10 + 2  # every CDF point of both phases
    assert any(name.startswith("06-soak-memory-series") for name in files)
    # Too long to print: the data tables are not in any rendered section.
    assert all("Soak latency CDF" not in getattr(b, "title", "")
               for s in view.sections for b in s.blocks)  # fmt: skip
