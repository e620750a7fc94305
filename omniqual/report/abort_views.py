"""Abort cleanup figures in the run report: per ``abort`` result that recorded them
(``effective["abort_cleanup"]``, ``domain.abort_cleanup``), the work each cut left running
against its allowance and the CPU after the cut against the idle baseline, the resources before
the cases and after the settle against their bounds, each cancelled async job as the server
showed it afterwards, and a bar plot of work after each cut.
"""

from collections.abc import Iterable

from pydantic import ValidationError

from omniqual.domain.abort_cleanup import AbortCleanup
from omniqual.domain.result import GateResult
from omniqual.report.blocks import Block, KeyValues, Plot, Table, non_empty
from omniqual.report.evidence_blocks import RowLabels, row_label
from omniqual.report.links import EvidenceLinks
from omniqual.report.redact import safe_text
from omniqual.report.soak_plot import figure_svg

KEY = "abort_cleanup"
MIB = 1024 * 1024
_CUT_HEADERS = (
    "Case", "Queued", "Window (s)", "CPU after cut (core·s/s)", "Idle CPU (core·s/s)",
    "Busy until (s)", "Extra executions", "Work after cut (s)", "Allowed (s)",
)  # fmt: skip
_RESOURCE_HEADERS = ("Resource", "Before cases", "After settle", "Growth", "Bound")
_JOB_HEADERS = ("Case", "DELETE", "Afterwards", "Content", "Terminal states",
                "Still listed unfinished")  # fmt: skip


def _f(value: float | None, digits: str = ".3g") -> str:
    return "—" if value is None else format(value, digits)


def cleanup_of(result: GateResult) -> AbortCleanup | str | None:
    raw = result.effective.get(KEY)
    if not isinstance(raw, dict):
        return None
    try:
        return AbortCleanup.model_validate(raw)
    except ValidationError as exc:
        return f"{exc.error_count()} field(s) malformed, first: {exc.errors()[0]['loc']}"


def _growth(before: float | None, after: float | None, scale: float = 1.0) -> tuple[str, str, str]:
    if before is None or after is None:
        return _f(None if before is None else before / scale, ".4g"), _f(
            None if after is None else after / scale, ".4g"), "not measured"  # fmt: skip
    return (format(before / scale, ".4g"), format(after / scale, ".4g"),
            format((after - before) / scale, "+.4g"))  # fmt: skip


def resource_rows(record: AbortCleanup) -> tuple[tuple[str, ...], ...]:
    b, a, bounds = record.baseline, record.after, record.bounds
    source = safe_text(record.resource_source or "?")
    rows = (
        (f"memory (MiB, {source})", *_growth(b.memory_bytes, a.memory_bytes, MIB),
         f"+{_f(bounds.memory_growth_mib, 'g')}"),
        ("open FDs", *_growth(b.open_fds, a.open_fds), f"+{_f(bounds.fd_growth, 'g')}"),
        ("temp files", *_growth(b.temp_files, a.temp_files),
         f"+{_f(bounds.temp_file_growth, 'g')}"),
        ("GPU memory of the server tree (MiB)", *_growth(b.gpu_tree_bytes, a.gpu_tree_bytes, MIB),
         f"+{_f(bounds.gpu_memory_growth_mib, 'g')}"),
    )  # fmt: skip
    return rows


def cut_rows(record: AbortCleanup) -> tuple[tuple[str, ...], ...]:
    return tuple(
        (safe_text(c.case), "yes" if c.queued else "no", _f(c.window_s), _f(c.cpu_rate),
         _f(record.idle_cpu_rate), _f(c.busy_s), _f(c.extra_executions, "g"), _f(c.ran_on_s),
         _f(c.allowed_s))
        for c in record.cuts
    )  # fmt: skip


def job_rows(record: AbortCleanup) -> tuple[tuple[str, ...], ...]:
    return tuple(
        (safe_text(j.case), "—" if j.delete_status is None else str(j.delete_status),
         safe_text(j.after), "—" if j.content_status is None else str(j.content_status),
         " then ".join(map(safe_text, j.terminal_states)) or "none",
         "yes" if j.still_listed else "no")
        for j in record.jobs
    )  # fmt: skip


def _plot(record: AbortCleanup) -> str:
    from matplotlib.figure import Figure

    cuts = [c for c in record.cuts if c.ran_on_s is not None]
    figure = Figure(figsize=(6.4, 1.4 + 0.3 * len(cuts)), layout="constrained")
    axes = figure.add_subplot()
    names = [c.case for c in cuts]
    positions = list(range(len(cuts)))
    axes.barh(positions, [c.ran_on_s or 0.0 for c in cuts], color="#0969da",
              label="work after cut")  # fmt: skip
    allowed = [(p, c.allowed_s) for p, c in zip(positions, cuts, strict=True)
               if c.allowed_s is not None]  # fmt: skip
    if allowed:
        axes.scatter([a for _, a in allowed], [p for p, _ in allowed], marker="|", s=200,
                     color="#cf222e", label="allowed", zorder=3)  # fmt: skip
    axes.set_yticks(positions, names, fontsize=7)
    axes.invert_yaxis()
    axes.set_xlabel("seconds of service after the cut", fontsize=9)
    axes.grid(True, axis="x", linewidth=0.4, alpha=0.5)
    # Beside the axes: inside, it would hide the marks near the largest allowance.
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)
    return figure_svg(figure, "omniqual-abort")


def abort_blocks(results: Iterable[GateResult], labels: RowLabels,
                 links: EvidenceLinks | None = None) -> tuple[Block, ...]:  # fmt: skip
    blocks: list[Block] = []
    for result in results:
        record = cleanup_of(result)
        if record is None:
            continue
        label = f"{row_label(labels, result.row)} ({safe_text(result.gate_id)})"
        if isinstance(record, str):
            blocks.append(KeyValues(f"Abort cleanup: {label}",
                                    (("unreadable record", safe_text(record)),)))  # fmt: skip
            continue
        link = "" if links is None else links.result(result.run_id, result.result_id)
        cuts, resources, jobs = cut_rows(record), resource_rows(record), job_rows(record)
        settle = (f"settled in {_f(record.settle_s)} s (at most {_f(record.settle_max_s, 'g')} s)"
                  if record.settle_s is not None else "settle time not recorded")  # fmt: skip
        blocks += non_empty(
            KeyValues(f"Abort cleanup: {label}", (
                ("abort boundary", safe_text(record.boundary or "—")),
                ("work signals", ", ".join(map(safe_text, record.signals)) or "none"),
                ("solo latency (s)", _f(record.solo_s)),
                ("CPU idle / serving one request (core·s/s)",
                 f"{_f(record.idle_cpu_rate)} / {_f(record.busy_cpu_rate)}"),
                ("settle", settle),
            )),
            Table(f"Work after each cut: {label}", _CUT_HEADERS, cuts,
                  links=(link,) * len(cuts) if link else ()),
            Table(f"Resources around the abort cases: {label}", _RESOURCE_HEADERS, resources,
                  links=(link,) * len(resources) if link else ()),
            Table(f"Cancelled jobs afterwards: {label}", _JOB_HEADERS, jobs,
                  links=(link,) * len(jobs) if link else ()),
        )  # fmt: skip
        if any(c.ran_on_s is not None for c in record.cuts):
            blocks.append(Plot(f"Work after each cut vs allowance: {label}", _plot(record),
                               "Seconds of service the server spent after each cut (bars) "
                               "against the case's allowance (red mark)."))  # fmt: skip
    return tuple(blocks)
