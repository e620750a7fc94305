"""Offload-sweep evidence in the run report: per result of an ``offload_sweep`` gate, a summary
(frontier, recommended point for the budget, degenerate and memory sentences), the raw table of
every point with its verdict, refusal message and frontier mark, and the frontier plot.

Everything shown is read from the result's ``effective["sweep"]`` (see ``sweep_record``); the
report never recomputes the frontier. Record text passes through ``redact``."""

from collections.abc import Iterable, Mapping

from pydantic import JsonValue, ValidationError

from omniqual.domain.result import GateResult
from omniqual.report.blocks import Block, KeyValues, Plot, Table, non_empty
from omniqual.report.evidence_blocks import RowLabels, row_label
from omniqual.report.redact import safe_text, safe_value
from omniqual.report.sweep_plot import MIB, frontier_svg, plottable
from omniqual.report.sweep_record import SweepPointRecord, SweepRecord

SWEEP_KINDS = frozenset({"offload_sweep"})
_HEADERS = (
    "Point", "Mode", "Settings", "Verdict", "Frontier", "Startup (s)", "Latency median (s)",
    "Latency min–max (s)", "n", "Peak PSS load (MiB)", "Peak PSS steady (MiB)",
    "Peak RSS (MiB)", "GPU per device (MiB)", "Memory judged (MiB)", "Parity",
    "Refusal / verdict reasons",
)  # fmt: skip


def _s(value: float | None) -> str:
    return "—" if value is None else f"{value:.4g}"


def _mib(value: float | None) -> str:
    return "—" if value is None else f"{value / MIB:.1f}"


def _mark(point: SweepPointRecord, record: SweepRecord) -> str:
    if point.name in record.frontier:
        return "frontier (recommended)" if point.name == record.recommended else "frontier"
    if point.name in record.dominated:
        return f"dominated by {safe_text(record.dominated[point.name])}"
    return "not judged"


def _parity(point: SweepPointRecord) -> str:
    if point.parity is None:
        return "—"
    p = point.parity
    psnr = "∞ (identical)" if p.identical else f"{_s(p.psnr_db)} dB"
    figures = f"max abs error {_s(p.max_abs_error)}, PSNR {psnr}"
    return f"{safe_text(p.outcome or '—')} ({figures})"


def _settings(settings: Mapping[str, JsonValue]) -> str:
    pairs = [f"{safe_text(k)}={safe_value(v, k)}" for k, v in sorted(settings.items())]
    return "; ".join(pairs) or "—"


def _point_row(point: SweepPointRecord, record: SweepRecord) -> tuple[str, ...]:
    verdict = "refused" if point.refused else (point.verdict or "—")
    gpus = point.gpu_bytes_per_device
    why = [*([point.message] if point.message else []), *point.verdict_reasons]
    return (
        safe_text(point.name),
        safe_text(point.mode or "—"),
        _settings(point.settings),
        safe_text(verdict),
        _mark(point, record),
        _s(point.startup_s),
        _s(point.latency_median_s),
        f"{_s(point.latency_min_s)} – {_s(point.latency_max_s)}",
        "—" if point.repetitions is None else str(point.repetitions),
        _mib(point.peak_pss_bytes_load),
        _mib(point.peak_pss_bytes_steady),
        _mib(point.peak_rss_bytes),
        "; ".join(f"{safe_text(d)}: {_mib(b)}" for d, b in sorted(gpus.items())) if gpus else "—",
        _mib(record.memory(point)),
        _parity(point),
        "; ".join(safe_text(w) for w in why) or "—",
    )


def _caption(record: SweepRecord) -> str:
    refused = [f"{safe_text(p.name)} ({safe_text(p.message or 'no message')})"
               for p in record.points if p.refused]  # fmt: skip
    unplotted = [safe_text(p.name) for p in record.points
                 if not p.refused and (p.latency_median_s is None
                                       or record.memory(p) is None)]  # fmt: skip
    parts = ["Median latency against the peak memory the frontier judged (see the memory note)."]
    if record.degenerate:
        # Said under the plot too: a lone frontier point reads as a drawing error otherwise.
        parts.append(f"No trade-off: {safe_text(record.degenerate, limit=400)}.")
    parts.append(f"Refused to start: {', '.join(refused)}." if refused else "No point refused.")
    if unplotted:
        parts.append(f"Not plotted (a figure is missing): {', '.join(unplotted)}.")
    return " ".join(parts)


def _summary(result: GateResult, record: SweepRecord, labels: RowLabels) -> KeyValues:
    budget = record.budget_bytes
    items = [
        ("row", row_label(labels, result.row)),
        ("outcome", "; ".join([result.outcome.value, *map(safe_text, result.reasons)])),
        ("points", str(len(record.points))),
        ("frontier (memory ascending)", ", ".join(map(safe_text, record.frontier)) or "none"),
        ("memory budget", "none given" if budget is None else f"{budget / MIB:.1f} MiB"),
        ("recommended", safe_text(record.recommended) if record.recommended
         else f"none: {safe_text(record.recommendation or 'no frontier point fits the budget')}"),
    ]  # fmt: skip
    if record.indistinguishable:
        pairs = "; ".join(" and ".join(map(safe_text, pair)) for pair in record.indistinguishable)
        items.append(("not apart beyond their spread", pairs))
    if record.resolution_note:
        items.append(("resolution", safe_text(record.resolution_note, limit=400)))
    if record.degenerate:
        items.append(("degenerate frontier", safe_text(record.degenerate, limit=400)))
    if record.memory_note:
        items.append(("memory note", safe_text(record.memory_note, limit=400)))
    return KeyValues(f"Offload sweep: {row_label(labels, result.row)}", tuple(items))


def sweep_blocks(results: Iterable[GateResult], labels: RowLabels) -> tuple[Block, ...]:
    """Summary, raw point table and frontier plot per offload-sweep result with a sweep."""
    blocks: list[Block] = []
    for result in results:
        raw = result.effective.get("sweep")
        if result.gate_kind not in SWEEP_KINDS or not isinstance(raw, dict):
            continue
        label = row_label(labels, result.row)
        try:
            record = SweepRecord.model_validate(raw)
        except ValidationError as exc:
            problem = f"{exc.error_count()} field(s) malformed, first: {exc.errors()[0]['loc']}"
            unreadable = (("unreadable sweep record", safe_text(problem)),)
            blocks.append(KeyValues(f"Offload sweep: {label}", unreadable))
            continue
        blocks += non_empty(
            _summary(result, record, labels),
            Table(
                f"Offload sweep points (raw): {label}",
                _HEADERS,
                tuple(_point_row(p, record) for p in record.points),
            ),
        )
        if plottable(record):
            blocks.append(Plot(f"Latency–memory frontier: {label}", frontier_svg(record),
                               _caption(record)))  # fmt: skip
    return tuple(blocks)
