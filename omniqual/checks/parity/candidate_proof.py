"""Fast-path proof: is the candidate's feature really at work, or did it silently fall back?

Five kinds of signal, as the gate spec declares them per feature: a startup-log pattern with a
count (read from the candidate's own launch only), a ``/metrics`` series, a measured output
difference from the reference beyond the reference's own spread (lossy paths and lossless ones
that change bytes), a measured shared execution (batching), and a module census (which linears a
quantization reached). A signal is active, inactive (the log counted below its minimum, the
series stayed below, the outputs stayed inside the spread, the cases finished an execution
apart, the census found too few quantized linears), or absent (nothing to read): absence is
never proof either way. A line that only shows a path switched on is never proof it ran. A
required signal (the census) must read active for the path to be active, and is never enough
alone."""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from omniqual.checks.parity.candidate_params import FastPath, LogEvidence, MetricEvidence
from omniqual.deploy.launcher import LAUNCH_MARKER
from omniqual.deploy.server_log import SEARCH_BYTES

SILENT_FALLBACK = "fast path inactive (silent fallback)"
NOT_PROVABLE = "activity not provable on this release"
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


@dataclass(frozen=True, slots=True)
class Signal:
    feature: str
    source: str
    """``log``, ``metrics`` or ``output``."""
    active: bool | None
    """None: the signal is absent (nothing to read, nothing matched)."""
    detail: str
    enablement: bool = False
    """The signal only shows the path switched on (never proof that a lossy path acted)."""
    required: bool = False
    """The path is active only if this signal reads active (a quantization's census), and it
    never shows the path at work by itself."""


def launch_text(path: Path | None) -> str | None:
    """The log of the latest launch in ``path`` (a resumed run appends launches), colour codes
    stripped; None when there is no readable log."""
    if path is None:
        return None
    try:
        with path.open("rb") as handle:
            handle.seek(0, 2)
            handle.seek(max(0, handle.tell() - SEARCH_BYTES))
            text = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    marker = text.rfind(LAUNCH_MARKER)
    return _ANSI.sub("", text[marker:] if marker >= 0 else text)


def log_signal(feature: str, evidence: LogEvidence, text: str | None) -> Signal:
    if text is None:
        return Signal(feature, "log", None, "no server log to read (not launched by omniqual)")
    pattern = re.compile(evidence.pattern, re.MULTILINE)
    counted = "count" in pattern.groupindex
    matches = list(pattern.finditer(text))
    if not matches:
        # Only a log read from its launch marker on holds the start-up lines: a window that cut
        # them off proves nothing either way.
        if evidence.always_logged and text.startswith(LAUNCH_MARKER):
            detail = (f"log: {evidence.says} = 0 in the whole launch log (no line matches "
                      f"{evidence.pattern!r}, which the release logs whenever it is "
                      "on)")  # fmt: skip
            return Signal(feature, "log", False, detail)
        return Signal(feature, "log", None, f"no log line matches {evidence.pattern!r}")
    counts = [int(m.group("count")) for m in matches] if counted else [1] * len(matches)
    total = max(counts) if evidence.aggregate == "max" else sum(counts)
    active = total >= evidence.min_count
    how = "largest" if evidence.aggregate == "max" else "total"
    detail = f"log: {evidence.says} = {total} ({how}; active at >= {evidence.min_count})"
    return Signal(feature, "log", active, detail, evidence.shows == "enablement")


def metric_value(text: str, series: str) -> float | None:
    """The sum of ``series`` over its label sets in a Prometheus text page (None: not served)."""
    found: float | None = None
    head = re.compile(rf"^{re.escape(series)}(?:\{{[^}}]*\}})?\s+(\S+)", re.MULTILINE)
    for match in head.finditer(text):
        try:
            value = float(match.group(1))
        except ValueError:
            continue
        found = value if found is None else found + value
    return found


def metric_signal(feature: str, evidence: MetricEvidence, text: str | None) -> Signal:
    if text is None:
        return Signal(feature, "metrics", None, "no /metrics page could be read")
    value = metric_value(text, evidence.series)
    if value is None:
        return Signal(feature, "metrics", None, f"/metrics serves no {evidence.series}")
    active = value >= evidence.min_value
    detail = f"/metrics: {evidence.series} = {value:g} (active at >= {evidence.min_value:g})"
    return Signal(feature, "metrics", active, detail)


@dataclass(frozen=True, slots=True)
class Activity:
    """One feature's verdict on activity: at most one of the three is set."""

    failure: str | None = None
    invalid: str | None = None
    limitation: str | None = None


def signals_for(
    path: FastPath,
    log: str | None,
    metrics: str | None,
    measured: Sequence[Signal],
) -> tuple[Signal, ...]:
    """The declared log and metric signals, then the measured ones (output, timing)."""
    found = [log_signal(path.feature, e, log) for e in path.log]
    found += [metric_signal(path.feature, e, metrics) for e in path.metrics]
    return (*found, *measured)


def judge_activity(path: FastPath, signals: Sequence[Signal]) -> Activity:
    """Whether one feature is shown at work.

    A required signal (a quantization's census) that reads inactive fails it whatever the
    others read: outputs that differ do not show which layers were quantized. Otherwise any
    other signal reading active (never a mere enablement line) shows it at work, provided every
    required signal read active (one that is absent leaves the path unproven: invalid). Else a
    signal that reads inactive fails it: for a path proven by its outputs, outputs no further
    from the reference than the reference from itself are the silent fallback. With nothing
    reading either way, the feature is not shown active (invalid), unless the release offers
    no way to show it (``unprovable``): then the row is at most limited, never validated."""
    required = [s for s in signals if s.required]
    others = [s for s in signals if not s.required]
    short = [s.detail for s in required if s.active is False]
    if short:
        seen = "; ".join([*short, *(s.detail for s in others)])
        return Activity(failure=f"{path.feature}: {SILENT_FALLBACK}: {seen}")
    found = _judge_signals(path, others)
    unread = [s.detail for s in required if s.active is None]
    if found == Activity() and unread:
        shown = "; ".join([*unread, *(s.detail for s in others if s.active)])
        return Activity(invalid=f"{path.feature}: fast path not shown active ({shown})")
    return found


def _judge_signals(path: FastPath, signals: Sequence[Signal]) -> Activity:
    if any(s.active and not s.enablement for s in signals):
        return Activity()
    inactive = [s.detail for s in signals if s.active is False]
    enabled = [f"{s.detail}, which only shows it switched on" for s in signals if s.active]
    same_outputs = any(s.source == "output" and s.active is False for s in signals)
    if path.proven_by_output and same_outputs:
        seen = "; ".join([*inactive, *enabled])
        return Activity(failure=f"{path.feature}: {SILENT_FALLBACK}: {seen}")
    if inactive:
        seen = "; ".join([*inactive, *enabled])
        return Activity(failure=f"{path.feature}: fast path inactive: {seen}")
    absent = "; ".join([*(s.detail for s in signals if s.active is None), *enabled])
    if path.unprovable is not None:
        why = f"{path.unprovable}; {absent}" if absent else path.unprovable
        return Activity(limitation=f"{path.feature}: {NOT_PROVABLE} ({why})")
    return Activity(invalid=f"{path.feature}: fast path not shown active ({absent or 'no signal'})")
