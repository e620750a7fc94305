"""Stage accounting in the run report: per row and gate, the mean and median of each stage the
server reported (queue, encode, denoise, decode) against the client latency, and the rest
(latency − the classified stages, per request), read from ``effective["stage_accounting"]``
(``domain.stage_accounting``; recorded by the soak gate).

Where nothing was reported the block says so and names what would fill it: a ``soak`` gate on
the row, against a server started with the pipeline profiler for encode/denoise/decode.
"""

from collections.abc import Iterable

from pydantic import ValidationError

from omniqual.domain.result import GateResult
from omniqual.domain.stage_accounting import PROFILER_FLAG, STAGES, StageAccounting, StageFigure
from omniqual.report.blocks import NO_EVIDENCE, Block, Bullets, Table
from omniqual.report.evidence_blocks import RowLabels, row_label
from omniqual.report.links import EvidenceLinks
from omniqual.report.redact import safe_text

KEY = "stage_accounting"
_HEADERS = ("Row", "Gate", "Requests (reporting / OK)", "Latency mean / p50 (s)",
            *(f"{s.capitalize()} mean / p50 (s)" for s in STAGES), "Rest mean / p50 (s)",
            "Server peak memory max / mean (MB)", "Other reported names")  # fmt: skip
STAGE_FILL = (
    f"stage accounting: a `soak` gate records the server's stage_durations per request (queue "
    f"always; encode, denoise and decode only from a server started with {PROFILER_FLAG})"
)
"""What would fill the stage accounting: said beside a section's own empty note."""
FILL = f"{NO_EVIDENCE}: no result in scope recorded stage accounting; {STAGE_FILL}"


def _pair(figure: StageFigure | None) -> str:
    if figure is None:
        return "not reported"
    return f"{figure.mean_s:.4g} / {figure.p50_s:.4g} (n={figure.samples})"


def _mb(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def accounting_of(result: GateResult) -> StageAccounting | str | None:
    raw = result.effective.get(KEY)
    if not isinstance(raw, dict):
        return None
    try:
        return StageAccounting.model_validate(raw)
    except ValidationError as exc:
        return f"{exc.error_count()} field(s) malformed, first: {exc.errors()[0]['loc']}"


def _row(result: GateResult, found: StageAccounting, labels: RowLabels) -> tuple[str, ...]:
    by = {f.stage: f for f in found.stages}
    peak = f"{_mb(found.peak_memory_mb_max)} / {_mb(found.peak_memory_mb_mean)}"
    return (
        row_label(labels, result.row), safe_text(result.gate_id),
        f"{found.reporting} / {found.requests}", _pair(found.latency),
        *(_pair(by.get(s)) for s in STAGES), _pair(found.rest), peak,
        ", ".join(safe_text(n) for n in found.other_names) or "—",
    )  # fmt: skip


def stage_table(results: Iterable[GateResult], labels: RowLabels,
                links: EvidenceLinks | None = None) -> Table:  # fmt: skip
    """One row per result that recorded stage accounting (also the CSV form)."""
    rows: list[tuple[str, ...]] = []
    hrefs: list[str] = []
    notes: list[str] = []
    for result in results:
        found = accounting_of(result)
        if found is None:
            continue
        if isinstance(found, str):
            notes.append(f"{row_label(labels, result.row)}: unreadable record ({found})")
            continue
        rows.append(_row(result, found, labels))
        hrefs.append("" if links is None else links.result(result.run_id, result.result_id))
        if found.reporting == 0:
            notes.append(f"{row_label(labels, result.row)} ({safe_text(result.gate_id)}): the "
                         f"server reported no stage_durations for any request")  # fmt: skip
        elif found.note:
            notes.append(f"{row_label(labels, result.row)}: {safe_text(found.note)}")
    note = " ".join(
        ["The rest is latency (from send) minus queue+encode+denoise+decode per request; totals "
         "such as stage_0_gen overlap the stages and are never summed.", *notes])  # fmt: skip
    return Table("Stage accounting (server stage_durations)", _HEADERS, tuple(rows),
                 links=tuple(hrefs) if any(hrefs) else (), note=note)  # fmt: skip


def stage_blocks(results: Iterable[GateResult], labels: RowLabels,
                 links: EvidenceLinks | None = None, *,
                 say_missing: bool = True) -> tuple[Block, ...]:  # fmt: skip
    """The stage table; without any record, a sentence naming what would fill it (or nothing
    when ``say_missing`` is False: the section's empty note then says it, see STAGE_FILL)."""
    table = stage_table(results, labels, links)
    if table.rows:
        return (table,)
    return (Bullets("Stage accounting", (FILL,)),) if say_missing else ()
