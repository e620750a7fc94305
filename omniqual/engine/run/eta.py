"""The time a run has left: pure arithmetic over what remains of its plan and the durations
measured so far.

A gate is expected to take the mean of its own measured durations, else of its kind's, else a
conservative prior for its kind (:data:`GATE_PRIORS_S`); a launch the mean measured start-up,
else :data:`STARTUP_PRIOR_S`. What is running counts for what it has left of that (never less
than nothing). Until anything at all was measured the figure is priors only, and says so.

With several launch groups at once (``lanes``), gates that measure still run one at a time, and
everything else (start-ups, the other gates) is shared out among the lanes. A measuring gate
whose kind shares its own start-ups is away from the host for them: the mean seconds its kind
was away (``aside_by_kind``; none measured yet: nothing) is shared out, the rest runs alone."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from omniqual.engine.run.events import PlannedItem

GATE_PRIORS_S: Mapping[str, float] = MappingProxyType({
    "api_contract": 60.0,
    "strict_load": 45.0,
    "fails_fast": 90.0,
    "fails_fast_request": 60.0,
    "soak": 300.0,
    "abort": 150.0,
    "candidate_parity": 60.0,
    "reference_parity": 60.0,
    "offload_sweep": 180.0,
    "isolation": 60.0,
    # Its own server launches (gates/perf.yaml: launches 3), each a start-up (STARTUP_PRIOR_S)
    # and a warm-up plus three repetitions (~30 s there): 3 * (45 + 30), rounded up.
    "perf": 240.0,
})  # fmt: skip
"""Seconds a gate of each built-in check kind is assumed to take before one was measured: the
embedded tour's gates on a 2-core AVX2 host, rounded up (an estimate that falls is better news
than one that climbs; the first measurement of a kind replaces its prior)."""
DEFAULT_GATE_PRIOR_S = 300.0
"""A check kind without a prior of its own (a third-party kind)."""
STARTUP_PRIOR_S = 45.0
"""A target's time to ready before one was measured."""


@dataclass(frozen=True, slots=True)
class Measured:
    """Durations measured so far in this run, in seconds."""

    by_gate: Mapping[str, Sequence[float]] = field(default_factory=dict)
    by_kind: Mapping[str, Sequence[float]] = field(default_factory=dict)
    startups: Sequence[float] = ()
    aside_by_kind: Mapping[str, Sequence[float]] = field(default_factory=dict)
    """Per check kind, the seconds each finished measuring gate was away from the host for its
    own start-ups (its result's ``stepped_aside_s``)."""

    def any(self) -> bool:
        return bool(self.startups) or any(self.by_kind.values()) or any(self.by_gate.values())


@dataclass(frozen=True, slots=True)
class Remaining:
    """What a run has not finished: gates and launches not begun, and what is under way."""

    gates: Sequence[PlannedItem]
    launches: int
    running: Sequence[tuple[PlannedItem, float]] = ()
    """Each gate under way, with how long it has run."""
    launching_s: float | None = None
    """How long a launch under way has been starting (None: none is)."""
    lanes: int = 1


@dataclass(frozen=True, slots=True)
class Estimate:
    seconds: float
    estimating: bool
    """Nothing measured yet: the figure is priors only."""


def _mean(values: Sequence[float] | None) -> float | None:
    return sum(values) / len(values) if values else None


def gate_seconds(item: PlannedItem, measured: Measured) -> float:
    """What one gate is expected to take."""
    for mean in (_mean(measured.by_gate.get(item.gate)), _mean(measured.by_kind.get(item.kind))):
        if mean is not None:
            return mean
    return GATE_PRIORS_S.get(item.kind, DEFAULT_GATE_PRIOR_S)


def startup_seconds(measured: Measured) -> float:
    """What one launch is expected to take until ready."""
    mean = _mean(measured.startups)
    return STARTUP_PRIOR_S if mean is None else mean


def alone_fraction(item: PlannedItem, measured: Measured) -> float:
    """The part of a gate that has the host to itself: none unless it measures; all of it
    unless it also shares its start-ups, then all but the mean its kind was away for them."""
    if not item.measures:
        return 0.0
    away = _mean(measured.aside_by_kind.get(item.kind)) if item.shares_start_ups else None
    whole = gate_seconds(item, measured)
    if away is None or whole <= 0:
        return 1.0
    return max(0.0, whole - away) / whole


def estimate_left(remaining: Remaining, measured: Measured) -> Estimate:
    alone = shared = 0.0
    lefts = [(item, gate_seconds(item, measured)) for item in remaining.gates]
    lefts += [(item, max(0.0, gate_seconds(item, measured) - ran))
              for item, ran in remaining.running]  # fmt: skip
    for item, left in lefts:
        # A gate under way is assumed as far through its start-ups as through its whole.
        part = alone_fraction(item, measured)
        alone += left * part
        shared += left * (1.0 - part)
    startup = startup_seconds(measured)
    shared += max(0, remaining.launches) * startup
    if remaining.launching_s is not None:
        shared += max(0.0, startup - remaining.launching_s)
    return Estimate(alone + shared / max(1, remaining.lanes), estimating=not measured.any())
