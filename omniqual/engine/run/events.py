"""Engine events: frozen values the CLI turns into progress bars and summaries."""

from collections.abc import Callable
from dataclasses import dataclass

from omniqual.domain.result import GateResult


@dataclass(frozen=True, slots=True)
class PlannedItem:
    """One gate on one row that a run is about to do."""

    gate: str
    kind: str
    """The gate's check kind (what a duration prior is chosen by)."""
    row: str
    recipe: str
    measures: bool = False
    """The gate has the host to itself (it measures time or memory): it runs alone even when
    launch groups run at once."""
    shares_start_ups: bool = False
    """A measuring gate whose own server start-ups run beside the other groups' work."""


@dataclass(frozen=True, slots=True)
class PlanReady:
    """What a run will do, once the gates a resumed run already recorded are set aside."""

    items: tuple[PlannedItem, ...]
    launches: int
    """Launches of a target the items need (a deployment given by URL is never launched)."""
    skipped_as_done: int = 0
    lanes: int = 1
    """Launch groups run at once (``--jobs`` as resolved on this host)."""


@dataclass(frozen=True, slots=True)
class TargetStarting:
    recipe: str


@dataclass(frozen=True, slots=True)
class TargetReady:
    recipe: str
    url: str
    seconds: float | None
    """The launch's time to ready; None for a deployment given by URL (nothing was started)."""


@dataclass(frozen=True, slots=True)
class TargetLost:
    """A launched target stopped answering after a gate; it is relaunched for the next one."""

    recipe: str
    after_gate: str
    row: str


@dataclass(frozen=True, slots=True)
class GateStarted:
    gate: str
    row: str


@dataclass(frozen=True, slots=True)
class GateProgress:
    gate: str
    message: str
    fraction: float | None


@dataclass(frozen=True, slots=True)
class GateFinished:
    result: GateResult


@dataclass(frozen=True, slots=True)
class GateSkippedAsDone:
    gate: str
    row: str


EngineEvent = (
    PlanReady
    | TargetStarting
    | TargetReady
    | TargetLost
    | GateStarted
    | GateProgress
    | GateFinished
    | GateSkippedAsDone
)
Observer = Callable[[EngineEvent], None]


def ignore(_event: EngineEvent) -> None:
    """The default observer."""
