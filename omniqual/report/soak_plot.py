"""The soak's plots as inline SVG: latency CDF per phase, offered against achieved rate over
time, and the server's memory over time (phases shaded on the same clock).

They draw what the ``SoakSeries`` record holds and decide nothing. matplotlib is imported lazily
and used through its object API (no pyplot, no global state); the SVG is byte-stable for a given
matplotlib (fixed hash salt, no date or creator, text kept as text), as in ``sweep_plot``.
"""

import io
import re
from typing import TYPE_CHECKING

from omniqual.domain.soak_series import PhaseSeries, SoakSeries

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

MIB = 1024 * 1024
_PROLOG = re.compile(r"\A.*?(?=<svg)", re.DOTALL)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_COLOURS = ("#0969da", "#9a6700", "#cf222e", "#1a7f37", "#8250df", "#57606a")


def figure_svg(figure: "Figure", salt: str) -> str:
    """One ``<svg>`` element (no XML prolog, DOCTYPE or comments) for an HTML page."""
    import matplotlib

    with matplotlib.rc_context({"svg.hashsalt": salt, "svg.fonttype": "none"}):
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    return _COMMENT.sub("", _PROLOG.sub("", buffer.getvalue(), count=1)).strip()


def _figure() -> tuple["Figure", "Axes"]:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6.4, 3.6), layout="constrained")
    axes = figure.add_subplot()
    axes.grid(True, linewidth=0.4, alpha=0.5)
    return figure, axes


def _colour(i: int) -> str:
    return _COLOURS[i % len(_COLOURS)]


def _label(phase: PhaseSeries) -> str:
    return f"{phase.name} ({phase.offered_rps:.3g}/s offered)"


def _shade_phases(axes: "Axes", series: SoakSeries) -> None:
    for i, phase in enumerate(series.phases):
        axes.axvspan(phase.start_s, phase.start_s + phase.duration_s, color=_colour(i),
                     alpha=0.08, linewidth=0)  # fmt: skip


def has_cdf(series: SoakSeries) -> bool:
    return any(p.latency_cdf for p in series.phases)


def has_rates(series: SoakSeries) -> bool:
    return any(p.windows for p in series.phases)


def has_memory(series: SoakSeries) -> bool:
    return any(m.memory_bytes is not None for m in series.memory)


def cdf_svg(series: SoakSeries) -> str:
    figure, axes = _figure()
    for i, phase in enumerate(series.phases):
        if phase.latency_cdf:
            xs, ys = zip(*phase.latency_cdf, strict=True)
            axes.step(xs, ys, where="post", color=_colour(i), label=_label(phase))
    axes.set_xlabel("latency from schedule (s)", fontsize=9)
    axes.set_ylabel("fraction of requests ≤ latency", fontsize=9)
    axes.set_ylim(0, 1.02)
    axes.legend(loc="lower right", fontsize=7)
    return figure_svg(figure, "omniqual-soak-cdf")


def rate_svg(series: SoakSeries) -> str:
    figure, axes = _figure()
    _shade_phases(axes, series)
    for i, phase in enumerate(series.phases):
        if not phase.windows:
            continue
        starts = [phase.start_s + w.start_s for w in phase.windows]
        ends = phase.start_s + phase.windows[-1].end_s
        offered = [w.offered_rps for w in phase.windows]
        achieved = [w.achieved_rps for w in phase.windows]
        axes.stairs(offered, [*starts, ends], color=_colour(i), linestyle="--",
                    label=f"{phase.name} offered")  # fmt: skip
        axes.stairs(achieved, [*starts, ends], color=_colour(i),
                    label=f"{phase.name} achieved (answered OK)")  # fmt: skip
        # The phase's nominal rate: Poisson windows scatter around it.
        nominal = "nominal offered rate" if i == 0 else "_nolegend_"
        axes.hlines(phase.offered_rps, phase.start_s, ends, colors=_colour(i), linestyles=":",
                    linewidth=1.5, label=nominal)  # fmt: skip
    axes.set_xlabel("soak time (s)", fontsize=9)
    axes.set_ylabel("requests per second", fontsize=9)
    axes.legend(loc="best", fontsize=7)
    return figure_svg(figure, "omniqual-soak-rate")


def memory_svg(series: SoakSeries) -> str:
    figure, axes = _figure()
    _shade_phases(axes, series)
    host = [(m.elapsed_s, m.memory_bytes / MIB) for m in series.memory
            if m.memory_bytes is not None]  # fmt: skip
    source = series.memory_source or "server"
    if host:
        axes.plot(*zip(*host, strict=True), color="#0969da", label=f"host memory ({source})")
    gpu = [(m.elapsed_s, m.gpu_tree_bytes / MIB) for m in series.memory
           if m.gpu_tree_bytes is not None]  # fmt: skip
    if gpu:
        axes.plot(*zip(*gpu, strict=True), color="#cf222e", label="GPU memory (server tree)")
    for i, phase in enumerate(series.phases):
        axes.annotate(phase.name, (phase.start_s, 1.0), xycoords=("data", "axes fraction"),
                      xytext=(2, -10), textcoords="offset points", fontsize=7,
                      color=_colour(i))  # fmt: skip
    axes.set_xlabel("soak time (s)", fontsize=9)
    axes.set_ylabel("MiB", fontsize=9)
    axes.legend(loc="lower right", fontsize=7)
    return figure_svg(figure, "omniqual-soak-memory")
