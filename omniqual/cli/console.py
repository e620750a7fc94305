"""Turn engine events into a rich progress display and one line per finished gate."""

import json
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

from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.result import GateResult
from omniqual.engine.events import (
    EngineEvent,
    GateFinished,
    GateProgress,
    GateSkippedAsDone,
    GateStarted,
    TargetLost,
    TargetReady,
    TargetStarting,
)

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


class ConsoleObserver:
    """Progress on stderr; with ``as_json`` one JSON line per result on stdout."""

    def __init__(self, *, as_json: bool = False, quiet: bool = False) -> None:
        self.out = Console(highlight=False, soft_wrap=True)
        self.err = Console(stderr=True, highlight=False)
        self.as_json = as_json
        self.progress = Progress(
            SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
            console=self.err, transient=True, disable=quiet or not self.err.is_terminal,
        )  # fmt: skip
        # One bar per running gate: launch groups may run gates at once (--jobs).
        self._tasks: dict[tuple[str, str], TaskID] = {}

    def __enter__(self) -> "ConsoleObserver":
        self.progress.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:  # fmt: skip
        self.progress.stop()

    def __call__(self, event: EngineEvent) -> None:
        if isinstance(event, TargetStarting):
            self.err.print(f"starting target [bold]{event.recipe}[/] ...")
        elif isinstance(event, TargetReady):
            self.err.print(f"target [bold]{event.recipe}[/] ready at {event.url}")
        elif isinstance(event, TargetLost):
            self.err.print(f"[yellow]target [bold]{event.recipe}[/] stopped answering after "
                           f"{event.after_gate} (see its result); relaunching[/]")  # fmt: skip
        elif isinstance(event, GateStarted):
            task = self.progress.add_task(f"{event.gate} on {event.row[:60]}", total=None)
            self._tasks[(event.gate, event.row)] = task
        elif isinstance(event, GateProgress):
            # Progress names its gate, not its row: the latest running gate of that id.
            task_id = next((t for (g, _), t in reversed(self._tasks.items()) if g == event.gate),
                           None)  # fmt: skip
            if task_id is not None:
                total = 1.0 if event.fraction is not None else None
                self.progress.update(task_id, description=f"{event.gate}: {event.message[:60]}",
                                     completed=event.fraction or 0, total=total)  # fmt: skip
        elif isinstance(event, GateSkippedAsDone):
            self.err.print(f"[dim]already recorded: {event.gate} on {event.row}[/]")
        elif isinstance(event, GateFinished):
            done = self._tasks.pop((event.result.gate_id, event.result.row), None)
            if done is not None:
                self.progress.remove_task(done)
            self._finished(event.result)

    def _finished(self, result: GateResult) -> None:
        if self.as_json:
            self.out.print(result_json(result), markup=False)
            return
        style = STYLE[result.outcome]
        self.err.print(f"[{style}]{result.outcome.value:>7}[/] {result.gate_id} on {result.row}")
        for reason in result.reasons[:8]:
            self.err.print(f"         - {reason}", markup=False)
