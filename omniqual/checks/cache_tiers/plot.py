"""The speed/quality plot of a cache sweep as SVG: mean latency (x) against worst SSIM (y).
Frontier points are filled and joined, others hollow, inactive points (no cache hits) crosses at
their measured latency and quality. It draws what the block says; it decides nothing. matplotlib
is imported lazily and used through its object API (no pyplot state); the SVG is byte-stable for
a given matplotlib (fixed hash salt, no date or creator metadata)."""

import io
from typing import Any


def frontier_svg(points: list[dict[str, Any]], front: tuple[str, ...]) -> bytes:
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context({"svg.hashsalt": "omniqual-cache-tiers", "svg.fonttype": "none"}):
        figure = Figure(figsize=(6.4, 4.0), layout="constrained")
        axes = figure.add_subplot()
        drawn = {p["name"]: p for p in points
                 if p.get("latency_s") is not None and p.get("ssim") is not None}  # fmt: skip
        line = [(drawn[n]["latency_s"], drawn[n]["ssim"]) for n in front if n in drawn]
        if line:
            axes.plot(*zip(*line, strict=True), "-o", color="#0969da", label="frontier")
        for name, p in drawn.items():
            if not p.get("active", True):
                axes.scatter([p["latency_s"]], [p["ssim"]], marker="x", color="#57606a")
            else:
                face = "none" if name not in front else "#0969da"
                axes.scatter([p["latency_s"]], [p["ssim"]], marker="o", facecolors=face,
                             edgecolors="#57606a")  # fmt: skip
            axes.annotate(name, (p["latency_s"], p["ssim"]), textcoords="offset points",
                          xytext=(4, 4), fontsize=8)  # fmt: skip
        axes.set_xlabel("mean latency per request (s)")
        axes.set_ylabel("worst SSIM against lossless")
        axes.set_title("cache tiers: speed against quality (x: inactive, no cache hits)")
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    return buffer.getvalue().encode("utf-8")
