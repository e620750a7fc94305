"""Engine events: frozen values the CLI turns into progress bars and summaries."""

from collections.abc import Callable
from dataclasses import dataclass

from omniqual.domain.result import GateResult


@dataclass(frozen=True, slots=True)
class TargetStarting:
    recipe: str


@dataclass(frozen=True, slots=True)
class TargetReady:
    recipe: str
    url: str
    seconds: float


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
    TargetStarting
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
