"""Offload-sweep evidence in the run report: the raw point table with verdicts and frontier marks,
the recommended point, the degenerate and memory sentences, and the frontier plot as inline SVG
in HTML (never a payload in Markdown), byte-stable across renders."""

import base64
import re

from omniqual.domain.matrix import CompiledMatrix
from omniqual.domain.outcomes import CellState
from omniqual.domain.result import GateResult
from omniqual.report.blocks import KeyValues, Plot, Table
from omniqual.report.render import render_run_report
from omniqual.report.run_views import RunEvidence, run_report_view
from omniqual.report.sweep_plot import frontier_svg
from omniqual.report.sweep_record import SweepRecord
from omniqual.report.sweep_views import sweep_blocks
from tests.unit.report.conftest import MatrixFactory, ResultFactory, RowFactory

MIB = 2**20
DEGENERATE = "every offload point uses more memory than the resident point resident"
NOTE = "On CPU the device is host memory."


def _point(
    name: str, latency: float | None, mib: float | None, **extra: object
) -> dict[str, object]:
    point: dict[str, object] = {
        "name": name, "mode": "layer", "settings": {"resident_layers": 1}, "refused": False,
        "message": None, "startup_s": 20.0, "latency_median_s": latency,
        "latency_min_s": latency, "latency_max_s": latency, "repetitions": 3,
        "peak_pss_bytes_load": None if mib is None else mib * MIB,
        "peak_pss_bytes_steady": None if mib is None else mib * MIB,
        "peak_rss_bytes": None, "gpu_bytes_per_device": None,
        "parity": {"outcome": "passed", "max_abs_error": 0.0, "psnr_db": None},
        "verdict": "valid", "verdict_reasons": [],
    }  # fmt: skip
    point.update(extra)
    return point


def sweep() -> dict[str, object]:
    return {
        "points": [
            _point("resident", 1.8, 1510, mode="none", settings={}),
            _point("layer-r1", 2.6, 1578),
            _point("layer-r2", 2.2, 1566, peak_pss_bytes_load=1570 * MIB),
            _point(
                "<b>pinned</b>",
                None,
                None,
                refused=True,
                verdict="invalid",
                parity=None,
                message="pin_memory requires an accelerator",
                startup_s=None,
            ),
        ],
        "frontier": ["resident"],
        "dominated": {"layer-r1": "resident", "layer-r2": "resident"},
        "recommended": "resident",
        "budget_bytes": 1600 * MIB,
        "degenerate": DEGENERATE,
        "memory_note": NOTE,
        "excluded": {"<b>pinned</b>": "invalid: refused"},  # an extra key is ignored
    }


def _result(make_result: ResultFactory, data: object = None) -> GateResult:
    return make_result(
        "offload-sweep", "offload_sweep", effective={"sweep": sweep() if data is None else data}
    )


def _evidence(make_matrix: MatrixFactory, make_row: RowFactory, result: GateResult) -> RunEvidence:
    matrix: CompiledMatrix = make_matrix(make_row(CellState.VALIDATED))
    return RunEvidence(title="sweep", matrix=matrix, results=(result,))


def test_sweep_lands_in_performance_with_table_marks_and_recommendation(
    make_result: ResultFactory, make_matrix: MatrixFactory, make_row: RowFactory
) -> None:
    view = run_report_view(_evidence(make_matrix, make_row, _result(make_result)))
    performance = next(s for s in view.sections if s.number == 6)
    summary, table, plot = (b for b in performance.blocks if b.title.startswith(("Offload", "Lat")))
    assert isinstance(summary, KeyValues) and isinstance(table, Table) and isinstance(plot, Plot)
    items = dict(summary.items)
    assert items["recommended"] == "resident"
    assert items["frontier (memory ascending)"] == "resident"
    assert items["memory budget"] == "1600.0 MiB"
    assert items["degenerate frontier"] == DEGENERATE
    assert items["memory note"] == NOTE
    rows = {row[0]: dict(zip(table.headers, row, strict=True)) for row in table.rows}
    assert rows["resident"]["Frontier"] == "frontier (recommended)"
    assert rows["layer-r1"]["Frontier"] == "dominated by resident"
    # No memory_bytes recorded: the gate's rule, the larger of the two PSS phases.
    assert rows["layer-r2"]["Memory judged (MiB)"] == "1570.0"
    assert rows["layer-r1"]["Memory judged (MiB)"] == "1578.0"
    pinned = rows["<b>pinned</b>"]
    assert (pinned["Verdict"], pinned["Frontier"]) == ("refused", "not judged")
    assert pinned["Refusal / verdict reasons"] == "pin_memory requires an accelerator"
    assert pinned["Latency median (s)"] == "—"
    assert "Refused to start: <b>pinned</b> (pin_memory requires an accelerator)." in plot.caption
    assert f"No trade-off: {DEGENERATE}." in plot.caption


def test_recorded_memory_figure_is_shown_and_absent_means_none(
    make_result: ResultFactory,
) -> None:
    data = sweep()
    points = data["points"]
    assert isinstance(points, list)
    points[0]["memory_bytes"] = 2000 * MIB  # e.g. GPU memory, not the PSS beside it
    (_, table, _) = sweep_blocks([_result(make_result, data)], {})
    assert isinstance(table, Table)
    judged = {row[0]: row[table.headers.index("Memory judged (MiB)")] for row in table.rows}
    assert judged == {"resident": "2000.0", "layer-r1": "—", "layer-r2": "—", "<b>pinned</b>": "—"}


def test_no_budget_fit_says_so(make_result: ResultFactory) -> None:
    data = {**sweep(), "recommended": None}
    (summary, *_) = sweep_blocks([_result(make_result, data)], {})
    assert isinstance(summary, KeyValues)
    assert dict(summary.items)["recommended"] == "none: no frontier point fits the budget"


def test_points_not_apart_give_no_recommendation_and_say_why(make_result: ResultFactory) -> None:
    why = "indistinguishable: resident is not faster than layer-r2 beyond their measured latency"
    data = {**sweep(), "recommended": None, "recommendation": why,
            "indistinguishable": [["resident", "layer-r2"]]}  # fmt: skip
    (summary, *_) = sweep_blocks([_result(make_result, data)], {})
    assert isinstance(summary, KeyValues)
    items = dict(summary.items)
    assert items["recommended"] == f"none: {why}"
    assert items["not apart beyond their spread"] == "resident and layer-r2"


def test_html_embeds_the_svg_inline_and_escapes_record_text(
    make_result: ResultFactory, make_matrix: MatrixFactory, make_row: RowFactory
) -> None:
    data = sweep()
    data["points"] = [*data["points"], _point("<i>r0</i>", 3.0, 1590)]
    html = render_run_report(_evidence(make_matrix, make_row, _result(make_result, data)), "html")
    assert html.count("<svg") == 1 and "</svg>" in html
    assert "<?xml" not in html and "<!DOCTYPE svg" not in html and "<!--" not in html
    # Record strings are escaped in the table, the caption and inside the SVG's text.
    assert "<b>pinned</b>" not in html and "<i>r0</i>" not in html
    assert "&lt;b&gt;pinned&lt;/b&gt;" in html
    svg = html[html.index("<svg") : html.index("</svg>")]
    assert "&lt;i&gt;r0&lt;/i&gt;" in svg
    assert "<script" not in html and 'src="http' not in html and 'href="http' not in html


def test_markdown_has_the_table_but_no_svg_or_base64(
    make_result: ResultFactory, make_matrix: MatrixFactory, make_row: RowFactory
) -> None:
    md = render_run_report(_evidence(make_matrix, make_row, _result(make_result)), "md")
    assert "| layer-r1 |" in md and "dominated by resident" in md
    assert "Plot in the HTML report only." in md
    assert "<svg" not in md and "data:image" not in md and "base64" not in md
    svg = frontier_svg(SweepRecord.model_validate(sweep()))
    assert base64.b64encode(svg.encode()).decode()[:40] not in md
    assert not re.search(r"[A-Za-z0-9+/=]{200,}", md)


def test_svg_is_deterministic_and_draws_every_plotted_name() -> None:
    record = SweepRecord.model_validate(sweep())
    first, second = frontier_svg(record), frontier_svg(record)
    assert first == second
    assert first.startswith("<svg") and first.endswith("</svg>")
    for name in ("resident", "layer-r1", "layer-r2", "frontier", "dominated", "recommended"):
        assert f">{name}<" in first
    assert "pinned" not in first  # refused: no figures to draw, listed in the caption instead
    assert "<dc:date>" not in first and "Matplotlib" not in first


def test_tolerant_of_missing_keys_and_explicit_about_malformed_ones(
    make_result: ResultFactory,
) -> None:
    (summary, table) = sweep_blocks([_result(make_result, {"points": [{"name": "only"}]})], {})
    assert isinstance(summary, KeyValues) and isinstance(table, Table)
    assert dict(summary.items)["frontier (memory ascending)"] == "none"
    assert table.rows[0][3:5] == ("—", "not judged")
    (broken,) = sweep_blocks([_result(make_result, {"points": "nope"})], {})
    assert isinstance(broken, KeyValues)
    assert broken.items[0][0] == "unreadable sweep record"


def test_other_kinds_and_sweepless_results_get_no_sweep_blocks(
    make_result: ResultFactory,
) -> None:
    assert sweep_blocks([make_result("soak", "soak", effective={"sweep": sweep()})], {}) == ()
    assert sweep_blocks([make_result("offload-sweep", "offload_sweep")], {}) == ()


def test_points_closer_than_the_resolution_say_so_beside_the_frontier(
    make_result: ResultFactory, make_matrix: MatrixFactory, make_row: RowFactory
) -> None:
    note = "The 3 measured points are not apart: run-to-run variation, not a measured trade-off."
    data = {**sweep(), "resolution_note": note}
    view = run_report_view(_evidence(make_matrix, make_row, _result(make_result, data)))
    performance = next(s for s in view.sections if s.number == 6)
    summary = next(b for b in performance.blocks if b.title.startswith("Offload"))
    assert isinstance(summary, KeyValues)
    assert dict(summary.items)["resolution"] == note
