"""Turn engine events into what a person or a log reads while a run goes on.

On a terminal (stderr): rich progress bars with the time left, and a line per finished gate.
For a log: plain lines (:mod:`omniqual.cli.plain`) with a heartbeat at least once a minute, on
stdout when stdout is not a terminal and ``--json`` is off (``make qualify > log`` keeps them),
else on stderr when stderr is not a terminal; each line goes to one stream only. With
``--json``, stdout carries nothing but one JSON object per result."""

import json
import threading
import time
from collections.abc import Callable
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from omniqual.cli.heartbeat import HEARTBEAT_S, Heartbeat
from omniqual.cli.plain import PlainLines, clock, time_left
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.result import GateResult
from omniqual.engine.run.events import (
    EngineEvent,
    GateFinished,
    GateProgress,
    GateSkippedAsDone,
    GateStarted,
    TargetLost,
    TargetReady,
    TargetStarting,
)
from omniqual.engine.run.run_progress import RunProgress

STYLE = {
    GateOutcome.PASSED: "green",
    GateOutcome.FAILED: "red",
    GateOutcome.INVALID: "yellow",
    GateOutcome.ERRORED: "magenta",
    GateOutcome.SKIPPED: "dim",
}


def result_json(result: GateResult) -> str:
    """The one-object-per-result form of ``--json``."""
    data = {
        "gate": result.gate_id,
        "version": result.gate_version,
        "row": result.row,
        "outcome": result.outcome.value,
        "reasons": list(result.reasons),
        "measurements": [m.model_dump(mode="json") for m in result.measurements],
        "artifacts": [a.model_dump(mode="json") for a in result.artifacts],
        "run_id": result.run_id,
        "result_id": result.result_id,
    }
    if result.cases:
        data["cases"] = [c.model_dump(mode="json") for c in result.cases]
    return json.dumps(data, sort_keys=True)


def _line(console: Console, text: str) -> None:
    """``text`` as one line of the console's stream, as it is (no markup, wrapping or colour)."""
    console.file.write(text + "\n")
    console.file.flush()


def plain_stream(*, out_terminal: bool, err_terminal: bool, as_json: bool) -> str | None:
    """Where plain lines go: ``stdout``, ``stderr``, or nowhere (both are terminals)."""
    if not out_terminal and not as_json:
        return "stdout"
    return None if err_terminal else "stderr"


class ConsoleObserver:
    """Bars or plain lines as the streams allow; with ``as_json`` JSON results on stdout."""

    def __init__(
        self, *, as_json: bool = False, quiet: bool = False, out: Console | None = None,
        err: Console | None = None, clock: Callable[[], float] = time.monotonic,
        heartbeat_s: float = HEARTBEAT_S,
    ) -> None:  # fmt: skip
        self.out = out or Console(highlight=False, soft_wrap=True)
        self.err = err or Console(stderr=True, highlight=False)
        self.as_json = as_json
        self.clock = clock
        self.began = clock()
        self.run = RunProgress()
        self.lines = PlainLines(self.run)
        where = plain_stream(out_terminal=self.out.is_terminal,
                             err_terminal=self.err.is_terminal, as_json=as_json)  # fmt: skip
        self.plain = {"stdout": self.out, "stderr": self.err}.get(where or "")
        self.heartbeat = Heartbeat(self._beat, interval_s=heartbeat_s, clock=clock)
        self.progress = Progress(
            SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
            console=self.err, transient=True, disable=quiet or not self.err.is_terminal,
        )  # fmt: skip
        # One bar per running gate: launch groups may run gates at once (--jobs).
        self._tasks: dict[tuple[str, str], TaskID] = {}
        self._lock = threading.Lock()

    def __enter__(self) -> "ConsoleObserver":
        self.progress.start()
        if self.plain is not None:
            self.heartbeat.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:  # fmt: skip
        self.heartbeat.stop()
        self.progress.stop()

    def __call__(self, event: EngineEvent) -> None:
        now = self.clock()
        with self._lock:
            self.run.observe(event, now)
            if self.plain is not None:
                text = self.lines.text(event, now)
                if text is not None:
                    self._say(text, now)
            self._bars(event, now)
            if isinstance(event, GateFinished) and self.as_json:
                _line(self.out, result_json(event.result))

    def _say(self, text: str, now: float) -> None:
        assert self.plain is not None
        _line(self.plain, f"[{clock(now - self.began)}] {text}")
        self.heartbeat.said(now)

    def _beat(self, now: float) -> None:
        with self._lock:
            if self.plain is not None:
                self._say(self.lines.heartbeat(now), now)

    def _bars(self, event: EngineEvent, now: float) -> None:
        """The terminal's view: bars, and (when no plain line is written) a line per event."""
        left = time_left(self.run.left(now))
        if isinstance(event, GateStarted):
            task = self.progress.add_task(f"{event.gate} on {event.row[:60]} · {left}",
                                          total=None)  # fmt: skip
            self._tasks[(event.gate, event.row)] = task
        elif isinstance(event, GateProgress):
            # Progress names its gate, not its row: the latest running gate of that id.
            task_id = next((t for (g, _), t in reversed(self._tasks.items()) if g == event.gate),
                           None)  # fmt: skip
            if task_id is not None:
                total = 1.0 if event.fraction is not None else None
                described = f"{event.gate}: {event.message[:60]} · {left}"
                self.progress.update(task_id, description=described,
                                     completed=event.fraction or 0, total=total)  # fmt: skip
        elif isinstance(event, GateFinished):
            done = self._tasks.pop((event.result.gate_id, event.result.row), None)
            if done is not None:
                self.progress.remove_task(done)
        if self.plain is not None:
            return
        if isinstance(event, TargetStarting):
            self.err.print(f"starting target [bold]{event.recipe}[/] ...")
        elif isinstance(event, TargetReady):
            after = f" after {event.seconds:.1f} s" if event.seconds is not None else ""
            self.err.print(f"target [bold]{event.recipe}[/] ready at {event.url}{after}")
        elif isinstance(event, TargetLost):
            self.err.print(f"[yellow]target [bold]{event.recipe}[/] stopped answering after "
                           f"{event.after_gate} (see its result); relaunching[/]")  # fmt: skip
        elif isinstance(event, GateSkippedAsDone):
            self.err.print(f"[dim]already recorded: {event.gate} on {event.row}[/]")
        elif isinstance(event, GateFinished) and not self.as_json:
            result = event.result
            style = STYLE[result.outcome]
            self.err.print(f"[{style}]{result.outcome.value:>7}[/] {result.gate_id} on "
                           f"{result.row} [dim]· {left}[/]")  # fmt: skip
            for reason in result.reasons[:8]:
                self.err.print(f"         - {reason}", markup=False)
