"""The plain form of a run's progress, for a log rather than a terminal: one line of text per
engine event that matters to a reader (a launch starting and ready, a gate starting and ending,
the plan), each prefixed with the time since the run began, and the heartbeat line that says
what is under way when nothing else was said for a while. No markup, no escape codes, never a
newline inside a line: a reason is its first line of text cut short."""

from omniqual.engine.run.eta import Estimate
from omniqual.engine.run.events import (
    EngineEvent,
    GateFinished,
    GateSkippedAsDone,
    GateStarted,
    PlanReady,
    TargetLost,
    TargetReady,
    TargetStarting,
)
from omniqual.engine.run.run_progress import RunProgress

REASON_CHARS = 160
NOTE_CHARS = 80


def clock(seconds: float) -> str:
    """``12:34``, or ``1:02:03`` from an hour on."""
    whole = max(0, int(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


def time_left(estimate: Estimate | None) -> str:
    """``~12:34 left``, marked ``estimating`` while it rests on priors only."""
    if estimate is None:
        return "time left unknown"
    figure = f"~{clock(estimate.seconds)} left"
    return f"{figure} (estimating)" if estimate.estimating else figure


def count(n: int, noun: str) -> str:
    """``1 gate``, ``2 gates``, ``2 launches``."""
    if n == 1:
        return f"1 {noun}"
    return f"{n} {noun}es" if noun.endswith(("s", "sh", "ch", "x")) else f"{n} {noun}s"


def one_line(text: str, limit: int) -> str:
    """``text`` with its whitespace folded to single spaces, cut to ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _axes(row: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in row.split(";") if "=" in part)


def row_labels(rows: list[str]) -> dict[str, str]:
    """Each row key as a selector of the axes that tell the planned rows apart (the model
    always first): ``model=sd3-tiny,quantization=fp8-online-dit`` instead of all 14 axes.
    A log line stays readable, and the label still selects the row (``--row``)."""
    parsed = {row: _axes(row) for row in rows}
    names = [n for n in dict.fromkeys(n for axes in parsed.values() for n in axes)]
    varying = [n for n in names
               if n == "model" or len({axes.get(n) for axes in parsed.values()}) > 1]  # fmt: skip
    return {row: ",".join(f"{n}={axes[n]}" for n in varying if n in axes)
            for row, axes in parsed.items()}  # fmt: skip


class PlainLines:
    """Texts (without the elapsed-time prefix) for events already folded into ``progress``.
    Rows are named by the axes that tell the plan's rows apart (``row_labels``)."""

    def __init__(self, progress: RunProgress) -> None:
        self.progress = progress
        self.labels: dict[str, str] = {}

    def row(self, key: str) -> str:
        return self.labels.get(key) or key

    def text(self, event: EngineEvent, now: float) -> str | None:
        p = self.progress
        if isinstance(event, PlanReady):
            self.labels = row_labels([item.row for item in event.items])
            done = f" ({event.skipped_as_done} already recorded)" if event.skipped_as_done else ""
            planned = f"{count(len(event.items), 'gate')}, {count(event.launches, 'launch')}"
            return f"plan: {planned}{done}; {time_left(p.left(now))}"
        if isinstance(event, GateSkippedAsDone):
            return f"already recorded: {event.gate} on {self.row(event.row)}"
        if isinstance(event, TargetStarting):
            return f"launch {event.recipe}: starting"
        if isinstance(event, TargetReady):
            if event.seconds is None:
                return f"target {event.recipe}: answering at {event.url}"
            return (f"launch {event.recipe}: ready at {event.url} after {event.seconds:.1f} s; "
                    f"{time_left(p.left(now))}")  # fmt: skip
        if isinstance(event, TargetLost):
            return (f"launch {event.recipe}: stopped answering after {event.after_gate} on "
                    f"{self.row(event.row)}; relaunching")  # fmt: skip
        if isinstance(event, GateStarted):
            started = f"started ({p.started}/{self._total()})"
            return f"gate {event.gate} on {self.row(event.row)}: {started}"
        if isinstance(event, GateFinished):
            r = event.result
            seconds = max(0.0, r.duration_s)
            line = (f"gate {r.gate_id} on {self.row(r.row)}: {r.outcome.value} in {seconds:.1f} s "
                    f"({p.finished}/{self._total()} done, {time_left(p.left(now))})")  # fmt: skip
            return f"{line} - {one_line(r.reasons[0], REASON_CHARS)}" if r.reasons else line
        return None

    def heartbeat(self, now: float) -> str:
        """What is under way, for how long, and the time left."""
        p = self.progress
        doing: list[str] = []
        if p.gate is not None:
            note = f" ({one_line(p.gate.note, NOTE_CHARS)})" if p.gate.note.strip() else ""
            doing.append(f"gate {p.gate.name} on {self.row(p.gate.row)} for "
                         f"{clock(now - p.gate.since)}"
                         f"{note}")  # fmt: skip
        if p.launch is not None:
            doing.append(f"launch {p.launch.name} starting for {clock(now - p.launch.since)}")
        what = "; ".join(doing) if doing else "no gate or launch under way"
        return f"still running: {what}; {time_left(p.left(now))}"

    def _total(self) -> int:
        return max(self.progress.planned, self.progress.started)
