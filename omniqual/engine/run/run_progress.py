"""Where a run stands, folded from its engine events: what is planned, begun and finished, what
is under way and since when, the durations measured so far, and from those the time left
(:mod:`omniqual.engine.run.eta`). Pure: whoever feeds it events passes the clock's reading."""

from dataclasses import dataclass, replace

from omniqual.engine.run.eta import Estimate, Measured, Remaining, estimate_left
from omniqual.engine.run.events import (
    EngineEvent,
    GateFinished,
    GateProgress,
    GateStarted,
    PlannedItem,
    PlanReady,
    TargetReady,
    TargetStarting,
)


@dataclass(frozen=True, slots=True)
class Activity:
    """A gate running on a row, or a launch of a recipe starting."""

    name: str
    row: str
    since: float
    note: str = ""
    """The gate's latest progress message."""


class RunProgress:
    def __init__(self) -> None:
        self.planned = 0
        self.planned_launches = 0
        self.started = 0
        self.finished = 0
        self.launches_started = 0
        self.gate: Activity | None = None
        self.launch: Activity | None = None
        self._pending: list[PlannedItem] = []
        self._running: dict[tuple[str, str], tuple[PlannedItem, float]] = {}
        """Gates under way (several when launch groups run at once), with when they began."""
        self._lanes = 1
        self._by_gate: dict[str, list[float]] = {}
        self._by_kind: dict[str, list[float]] = {}
        self._startups: list[float] = []
        self._aside_by_kind: dict[str, list[float]] = {}
        self._has_plan = False

    def observe(self, event: EngineEvent, now: float) -> None:
        if isinstance(event, PlanReady):
            self._has_plan = True
            self.planned += len(event.items)
            self.planned_launches += event.launches
            self._pending.extend(event.items)
            self._lanes = max(1, event.lanes)
        elif isinstance(event, TargetStarting):
            self.launches_started += 1
            self.launch = Activity(event.recipe, "", now)
        elif isinstance(event, TargetReady):
            if event.seconds is not None:
                self._startups.append(event.seconds)
            self.launch = None
        elif isinstance(event, GateStarted):
            self.started += 1
            self.gate = Activity(event.gate, event.row, now)
            taken = self._take(event.gate, event.row)
            if taken is not None:
                self._running[(event.gate, event.row)] = (taken, now)
        elif (isinstance(event, GateProgress) and self.gate is not None
              and self.gate.name == event.gate):  # fmt: skip
            # Another launch group's gate reports too: its note is not this gate's.
            self.gate = replace(self.gate, note=event.message)
        elif isinstance(event, GateFinished):
            result = event.result
            seconds = max(0.0, result.duration_s)
            self._by_gate.setdefault(result.gate_id, []).append(seconds)
            self._by_kind.setdefault(result.gate_kind, []).append(seconds)
            away = result.effective.get("stepped_aside_s")
            if isinstance(away, int | float) and not isinstance(away, bool):
                self._aside_by_kind.setdefault(result.gate_kind, []).append(float(away))
            self.finished += 1
            self._running.pop((result.gate_id, result.row), None)
            if self.gate is not None and (self.gate.name, self.gate.row) == (
                result.gate_id, result.row
            ):
                # Another launch group's gate may still run: it is what is under way now.
                self.gate = self._longest_running()

    def _longest_running(self) -> Activity | None:
        if not self._running:
            return None
        item, since = min(self._running.values(), key=lambda running: running[1])
        return Activity(item.gate, item.row, since)

    def _take(self, gate: str, row: str) -> PlannedItem | None:
        for position, item in enumerate(self._pending):
            if item.gate == gate and item.row == row:
                return self._pending.pop(position)
        return None

    def measured(self) -> Measured:
        return Measured(self._by_gate, self._by_kind, self._startups, self._aside_by_kind)

    def left(self, now: float) -> Estimate | None:
        """The time left; None before the plan is known."""
        if not self._has_plan:
            return None
        remaining = Remaining(
            gates=self._pending,
            launches=max(0, self.planned_launches - self.launches_started),
            running=[(item, now - since) for item, since in self._running.values()],
            launching_s=now - self.launch.since if self.launch is not None else None,
            lanes=self._lanes,
        )
        return estimate_left(remaining, self.measured())
