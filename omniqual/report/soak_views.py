"""Soak evidence in the run report: per ``soak`` result with a recorded series, a phase table
(offered and achieved rate, outcomes, latency percentiles read off the recorded CDF) and three
plots (latency CDF per phase, offered vs achieved rate over time, memory over time).

``soak_blocks`` is what the report shows; ``soak_tables`` is the data behind each plot as
tables (CDF points, rate windows, memory series) for CSV export, too long to print. Everything is
read from the result's ``effective["soak_series"]`` (``domain.soak_series``); the full series is
the ``soak-series.json`` artifact each row links to.
"""

from collections.abc import Iterable

from pydantic import ValidationError

from omniqual.domain.result import GateResult
from omniqual.domain.soak_series import PhaseSeries, SoakSeries
from omniqual.report.blocks import Block, KeyValues, Plot, Table, non_empty
from omniqual.report.evidence_blocks import RowLabels, row_label
from omniqual.report.links import EvidenceLinks
from omniqual.report.redact import safe_text
from omniqual.report.soak_plot import (
    MIB,
    cdf_svg,
    has_cdf,
    has_memory,
    has_rates,
    memory_svg,
    rate_svg,
)

SOAK_KINDS = frozenset({"soak"})
SERIES_ARTIFACT = "soak-series.json"
_PHASE_HEADERS = (
    "Phase", "Factor", "Offered (1/s)", "Achieved OK (1/s)", "OK", "Not OK", "Injected",
    "p50 (s)", "p90 (s)", "p99 (s)", "Max (s)", "Duration (s)",
)  # fmt: skip


def _s(value: float | None) -> str:
    return "—" if value is None else f"{value:.4g}"


def quantile(phase: PhaseSeries, q: float) -> float | None:
    """The smallest recorded latency whose CDF fraction reaches ``q`` (None without a CDF)."""
    for latency, fraction in phase.latency_cdf:
        if fraction >= q - 1e-12:
            return latency
    return phase.latency_cdf[-1][0] if phase.latency_cdf else None


def achieved_rps(phase: PhaseSeries) -> float | None:
    return phase.ok / phase.duration_s if phase.duration_s > 0 else None


def series_of(result: GateResult) -> SoakSeries | str | None:
    """The recorded series, a sentence saying why it is unreadable, or None (not recorded)."""
    raw = result.effective.get("soak_series")
    if result.gate_kind not in SOAK_KINDS or not isinstance(raw, dict):
        return None
    try:
        return SoakSeries.model_validate(raw)
    except ValidationError as exc:
        return f"{exc.error_count()} field(s) malformed, first: {exc.errors()[0]['loc']}"


def evidence_link(result: GateResult, links: EvidenceLinks | None) -> str:
    """The series artifact when the result kept one, else the result's journal line."""
    if links is None:
        return ""
    for artifact in result.artifacts:
        if artifact.name == SERIES_ARTIFACT:
            return links.artifact(result.run_id, artifact.sha256)
    return links.result(result.run_id, result.result_id)


def _phase_row(phase: PhaseSeries) -> tuple[str, ...]:
    return (
        safe_text(phase.name), _s(phase.factor), _s(phase.offered_rps), _s(achieved_rps(phase)),
        str(phase.ok), str(phase.failed), str(phase.injected), _s(quantile(phase, 0.5)),
        _s(quantile(phase, 0.9)), _s(quantile(phase, 0.99)),
        _s(phase.latency_cdf[-1][0] if phase.latency_cdf else None), _s(phase.duration_s),
    )  # fmt: skip


def _memory_note(series: SoakSeries) -> str:
    known = [m.memory_bytes for m in series.memory if m.memory_bytes is not None]
    if not known:
        return "no memory figure was readable during the soak"
    source = safe_text(series.memory_source or "unknown source")
    return (f"{source}: first {known[0] / MIB:.1f} MiB, peak {max(known) / MIB:.1f} MiB, "
            f"last {known[-1] / MIB:.1f} MiB over {len(series.memory)} points")  # fmt: skip


def soak_blocks(results: Iterable[GateResult], labels: RowLabels,
                links: EvidenceLinks | None = None) -> tuple[Block, ...]:  # fmt: skip
    """Phase table and the three plots per soak result that recorded its series."""
    blocks: list[Block] = []
    for result in results:
        series = series_of(result)
        if series is None:
            continue
        label = f"{row_label(labels, result.row)} ({safe_text(result.gate_id)})"
        if isinstance(series, str):
            blocks.append(KeyValues(f"Soak series: {label}",
                                    (("unreadable soak series", safe_text(series)),)))  # fmt: skip
            continue
        link = evidence_link(result, links)
        phases = tuple(_phase_row(p) for p in series.phases)
        blocks += non_empty(Table(
            f"Soak phases: {label}", _PHASE_HEADERS, phases,
            links=(link,) * len(phases) if link else (),
            note="Latency from the schedule (coordinated-omission free), plain requests "
                 "answered OK; percentiles read off the recorded CDF. Memory: "
                 + _memory_note(series) + ".",
        ))  # fmt: skip
        if has_cdf(series):
            blocks.append(Plot(f"Latency CDF per phase: {label}", cdf_svg(series),
                               "Fraction of plain requests answered OK within a latency, "
                               "one line per phase."))  # fmt: skip
        if has_rates(series):
            blocks.append(Plot(f"Offered vs achieved rate: {label}", rate_svg(series),
                               "Per window: scheduled requests per second (dashed) and "
                               "requests answered OK per second (solid); dotted: the "
                               "phase's nominal offered rate; phases shaded."))  # fmt: skip
        if has_memory(series):
            blocks.append(Plot(f"Memory over time: {label}", memory_svg(series),
                               f"Server memory during the soak ({_memory_note(series)}); "
                               "phases shaded."))  # fmt: skip
    return tuple(blocks)


def soak_tables(results: Iterable[GateResult], labels: RowLabels) -> tuple[Table, ...]:
    """The data behind the plots, one table per plot and result (for CSV export)."""
    tables: list[Table] = []
    for result in results:
        series = series_of(result)
        if not isinstance(series, SoakSeries):
            continue
        label = f"{row_label(labels, result.row)} ({safe_text(result.gate_id)})"
        cdf = tuple((safe_text(p.name), f"{lat:.6g}", f"{frac:.6g}")
                    for p in series.phases for lat, frac in p.latency_cdf)  # fmt: skip
        windows = tuple(
            (safe_text(p.name), f"{p.start_s + w.start_s:.6g}", f"{p.start_s + w.end_s:.6g}",
             f"{w.offered_rps:.6g}", f"{w.issued_rps:.6g}", f"{w.achieved_rps:.6g}")
            for p in series.phases for w in p.windows
        )  # fmt: skip
        memory = tuple(
            (f"{m.elapsed_s:.6g}", *("" if v is None else str(v) for v in
                                     (m.memory_bytes, m.gpu_tree_bytes, m.open_fds,
                                      m.temp_files)))
            for m in series.memory
        )  # fmt: skip
        tables += (t for t in (
            Table(f"Soak latency CDF: {label}", ("Phase", "Latency (s)", "Fraction ≤"), cdf),
            Table(f"Soak rate windows: {label}", ("Phase", "Start (s)", "End (s)",
                  "Offered (1/s)", "Issued (1/s)", "Achieved OK (1/s)"), windows),
            Table(f"Soak memory series: {label}", ("Elapsed (s)", "Memory (bytes)",
                  "GPU tree (bytes)", "Open FDs", "Temp files"), memory),
        ) if t.rows)  # fmt: skip
    return tuple(tables)
