"""The frontier plot of an offload sweep: median latency (x) against peak memory (y), as SVG.

Frontier points are filled and joined in the gate's order (memory ascending), dominated points
are hollow, invalid points that still carry figures are crosses, the recommended point is ringed
and the budget is a dashed line. It draws what the record says; it decides nothing.

matplotlib is imported lazily (only a report with a sweep pays for it) and used through its
object API, never pyplot, so no global backend or figure state is touched. The SVG is byte-stable
for a given matplotlib: fixed hash salt for ids, no date or creator metadata, text kept as text.
"""

import io
import re
from typing import TYPE_CHECKING

from omniqual.report.sweep_record import SweepPointRecord, SweepRecord

if TYPE_CHECKING:
    from matplotlib.figure import Figure

MIB = 1024 * 1024
_HASH_SALT = "omniqual-sweep"
# The inline <svg> element only: no XML prolog, DOCTYPE or comments inside an HTML page.
_PROLOG = re.compile(r"\A.*?(?=<svg)", re.DOTALL)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


def _xy(point: SweepPointRecord, record: SweepRecord) -> tuple[float, float] | None:
    memory = record.memory(point)
    if point.latency_median_s is None or memory is None:
        return None
    return point.latency_median_s, memory / MIB


def plottable(record: SweepRecord) -> bool:
    """Whether any point has both figures to draw."""
    return any(_xy(p, record) is not None for p in record.points)


def frontier_svg(record: SweepRecord) -> str:
    """The plot as one ``<svg>`` element; call only when :func:`plottable`."""
    import matplotlib

    with matplotlib.rc_context({"svg.hashsalt": _HASH_SALT, "svg.fonttype": "none"}):
        buffer = io.StringIO()
        draw(record).savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    return _COMMENT.sub("", _PROLOG.sub("", buffer.getvalue(), count=1)).strip()


def draw(record: SweepRecord) -> "Figure":
    """The plot as a matplotlib figure (also what a PNG preview is saved from)."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6.4, 4.0), layout="constrained")
    axes = figure.add_subplot()
    by_name = {p.name: p for p in record.points}
    front = [xy for n in record.frontier if n in by_name and (xy := _xy(by_name[n], record))]
    if front:
        axes.plot(*zip(*front, strict=True), "-o", color="#0969da", label="frontier", zorder=3)
    drawn: dict[str, list[tuple[float, float]]] = {"dominated": [], "invalid": [], "other": []}
    for point in record.points:
        xy = _xy(point, record)
        if xy is None or point.name in record.frontier:
            continue
        if point.verdict != "valid" or point.refused:
            drawn["invalid"].append(xy)
        elif point.name in record.dominated:
            drawn["dominated"].append(xy)
        else:
            drawn["other"].append(xy)
    if drawn["dominated"]:
        axes.scatter(*zip(*drawn["dominated"], strict=True), marker="o", facecolors="none",
                     edgecolors="#57606a", label="dominated", zorder=2)  # fmt: skip
    if drawn["invalid"]:
        axes.scatter(*zip(*drawn["invalid"], strict=True), marker="x", color="#cf222e",
                     label="invalid (not judged)", zorder=2)  # fmt: skip
    if drawn["other"]:
        axes.scatter(*zip(*drawn["other"], strict=True), marker="s", facecolors="none",
                     edgecolors="#9a6700", label="not judged", zorder=2)  # fmt: skip
    recommended = by_name.get(record.recommended or "")
    best = _xy(recommended, record) if recommended is not None else None
    if best is not None:
        axes.scatter(
            [best[0]], [best[1]], s=220, facecolors="none", edgecolors="#1a7f37",
            linewidths=2, label="recommended", zorder=4,
        )  # fmt: skip
    if record.budget_bytes is not None:
        axes.axhline(
            record.budget_bytes / MIB, linestyle="--", color="#1a7f37", linewidth=1,
            label=f"budget {record.budget_bytes / MIB:.1f} MiB",
        )  # fmt: skip
    for point in record.points:
        xy = _xy(point, record)
        if xy is not None:
            axes.annotate(
                point.name, xy, xytext=(7, 6), textcoords="offset points", fontsize=7,
                color="#1b1f24",
            )  # fmt: skip
    axes.set_xlabel("median latency (s), lower is better", fontsize=9)
    axes.set_ylabel("peak memory (MiB), lower is better", fontsize=9)
    axes.margins(0.1)  # room for the point names at the edges
    axes.grid(True, linewidth=0.4, alpha=0.5)
    axes.legend(loc="best", fontsize=7)
    return figure
