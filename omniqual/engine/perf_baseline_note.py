"""The arithmetic a perf baseline's file shows its reviewer (its header comment): what its
sessions can resolve (:mod:`omniqual.loadgen.sessions`) and how they followed the host's
reference workload (:mod:`omniqual.loadgen.host_fit`)."""

import math
import statistics

from omniqual.checks.perf.judge import baseline_sessions, host_fit
from omniqual.loadgen.regression import Direction, Spread, compare_launches
from omniqual.loadgen.sessions import one_session, session_spread, within_session_sd
from omniqual.loadgen.trend import student_t_quantile
from omniqual.specs.perf_baseline import BaselineEvidence, PerfBaseline


def within_launch_sd(evidence: BaselineEvidence) -> float:
    """One repetition's spread within a launch, pooled over the baseline's launches: the total
    spread of its repetitions less that of its launch means (whatever order they are kept in)."""
    values, launches = evidence.repetitions, evidence.launches
    grand = statistics.fmean(values)
    total = sum((v - grand) ** 2 for v in values)
    between = sum(x.repetitions * (x.mean - grand) ** 2 for x in launches)
    return math.sqrt(max(0.0, total - between) / max(1, len(values) - len(launches)))


def resolution_note(baseline: PerfBaseline) -> str:
    """The arithmetic behind the baseline's ``resolution``, for the reviewer of its file."""
    stated = baseline.resolution
    groups = baseline_sessions(baseline)
    if stated is None or len(groups) < 2:
        return ""
    spread = session_spread(groups)
    s_w = within_launch_sd(baseline.evidence)
    m, r, k = stated.launches_per_run, stated.repetitions_per_launch, spread.count
    s_l = max(s_w / math.sqrt(r), within_session_sd(groups) or 0.0)
    direction = Direction(baseline.direction)

    def typical(factor: float) -> tuple[float, float, int | None]:
        runs = ([Spread(r, spread.mean * factor, s_w * factor)] if m == 1 else
                [Spread(r, spread.mean * factor * (1 + d), s_w * factor)
                 for d in _scatter(m, s_l / spread.mean)])  # fmt: skip
        c = compare_launches([one_session(runs)], spread, threshold=baseline.threshold,
                             direction=direction, confidence=stated.confidence)  # fmt: skip
        return c.low, c.high, c.df

    low, high, df = typical(1.0)
    slow_low, slow_high, _ = typical(1.3 if direction is Direction.LOWER else 1 / 1.3)
    t, h = baseline.threshold, stated.min_threshold
    own = (s_w**2 / r) if m == 1 else s_l**2 / m
    se = math.sqrt(spread.stdev**2 * (1 + 1 / k) + own) / spread.mean
    quantile = student_t_quantile((1 + stated.confidence) / 2, df) if df else 0.0
    beyond = slow_low > t if direction is Direction.LOWER else slow_high < -t
    own_text = f"s_w^2 / {r}" if m == 1 else f"s_l^2 / {m}"
    return (
        f"Resolution (what this baseline can tell apart): its {len(baseline.evidence.launches)} "
        f"launches come from k = {k} sessions (runs),\n"
        f"  whose means average {spread.mean:.4g} {baseline.unit} with s_S = "
        f"{spread.stdev:.3g} ({spread.stdev / spread.mean:.1%}); launches within a session "
        f"scatter s_l = {s_l:.3g} ({s_l / spread.mean:.1%}),\n"
        f"  one repetition within a launch s_w = {s_w:.3g} ({s_w / spread.mean:.1%}).\n"
        f"A run (one session of m = {m} launch(es) of r = {r} repetitions) is read against them "
        f"with half-width\n"
        f"  t({(1 + stated.confidence) / 2:g}, df {df}) * sqrt(s_S^2 * (1 + 1/{k}) + "
        f"{own_text}) / mean = {quantile:.3f} * {se:.2%} = {h:.1%}.\n"
        f"Unchanged server, typical run: [{low:+.1%}, {high:+.1%}], "
        f"{'inside' if high <= t else 'not inside'} the {t:.0%} threshold.\n"
        f"30% slower, typical run: [{slow_low:+.1%}, {slow_high:+.1%}]: "
        f"{'beyond the threshold: failed' if beyond else 'not beyond the threshold: undecided'}.\n"
        f"Smallest threshold it can hold: {h:.1%}; smallest regression a typical run fails at "
        f"{t:.0%}: {t:.0%} + {h:.1%} = {stated.detects:.1%}."
    ) + _fit_lines(baseline)


def _scatter(m: int, relative_sd: float) -> list[float]:
    """``m`` offsets with mean 0 and sample deviation ``relative_sd`` (a typical run's launches)."""
    raw = [i - (m - 1) / 2 for i in range(m)]
    scale = statistics.stdev(raw)
    return [x / scale * relative_sd for x in raw]


def _fit_lines(baseline: PerfBaseline) -> str:
    fit = host_fit(baseline)
    if fit is None:
        return ""
    return (f"\nHost fit: its sessions followed the reference workload read beside them with a "
            f"slope of {fit.slope:.2f} (± {fit.slope_se:.2f}),\n  leaving s = "
            f"{fit.residual_sd:.1%} between sessions; a run on a host reading slower than their "
            f"{math.exp(fit.probe_log) * 1e3:.3g} ms\n  is passed only against their mean at its "
            "own reading (slope held to [0, 1]).")
