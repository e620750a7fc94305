"""Fast-path proof: is the candidate's feature really at work, or did it silently fall back?

Three kinds of signal, as the gate spec declares them per feature: a startup-log pattern with a
count (read from the candidate's own launch only), a ``/metrics`` series, and, for a lossy path,
a measured output difference from the reference. A signal is active, inactive (the log counted
below its minimum, the series stayed below), or absent (no log, no matching line, no series):
absence is never proof either way."""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from omniqual.checks.parity.candidate_params import FastPath, LogEvidence, MetricEvidence
from omniqual.deploy.launcher import LAUNCH_MARKER
from omniqual.deploy.server_log import SEARCH_BYTES

SILENT_FALLBACK = "fast path inactive (silent fallback)"
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
        return Signal(feature, "log", None, f"no log line matches {evidence.pattern!r}")
    total = sum(int(m.group("count")) for m in matches) if counted else len(matches)
    active = total >= evidence.min_count
    detail = f"log: {evidence.says} = {total} (active at >= {evidence.min_count})"
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


def output_signal(feature: str, identical: int, compared: int) -> Signal:
    """A lossy path changes outputs: any difference from the reference is activity."""
    if compared == 0:
        return Signal(feature, "output", None, "no output pair to compare")
    differing = compared - identical
    detail = f"output: {differing} of {compared} outputs differ from the reference"
    return Signal(feature, "output", differing > 0, detail)


def signals_for(
    path: FastPath, log: str | None, metrics: str | None, identical: int, compared: int
) -> tuple[Signal, ...]:
    found = [log_signal(path.feature, e, log) for e in path.log]
    found += [metric_signal(path.feature, e, metrics) for e in path.metrics]
    if path.lossy:
        found.append(output_signal(path.feature, identical, compared))
    return tuple(found)


def judge_activity(path: FastPath, signals: Sequence[Signal]) -> tuple[str | None, str | None]:
    """(failure, invalidity) for one feature; both None when it is shown active or nothing is
    asked of it.

    A declared log or metric signal that reads inactive fails the feature unless another signal
    shows it at work. A lossy feature whose outputs equal the reference's with nothing showing
    it active is the silent fallback (failed). Signals that are merely absent prove nothing
    either way: the feature is then not shown active (invalid). A line that only shows a lossy
    path switched on never shows it at work. A lossless feature with no declared signal is
    judged by its outputs alone (its tolerance)."""
    if any(s.active and not (path.lossy and s.enablement) for s in signals):
        return None, None
    inactive = [s.detail for s in signals if s.active is False and s.source != "output"]
    enabled = [f"{s.detail}, which only shows it switched on" for s in signals if s.active]
    same_outputs = any(s.source == "output" and s.active is False for s in signals)
    if path.lossy and same_outputs:
        seen = "; ".join([*inactive, *enabled, "every output identical to the reference"])
        return f"{path.feature}: {SILENT_FALLBACK}: {seen}", None
    if inactive:
        return f"{path.feature}: fast path inactive: {'; '.join(inactive)}", None
    if path.lossy or any(s.source != "output" for s in signals):
        absent = "; ".join(s.detail for s in signals) or "no signal declared"
        return None, f"{path.feature}: fast path not shown active ({absent})"
    return None, None
