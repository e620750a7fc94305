"""Where a run's wall time went: every server start-up and every gate, as recorded by the engine.

``timing.json`` in a run directory (also journalled as a ``run-timing`` artifact) holds one
:class:`RunTiming`. It is a convenience for reading the cost of a campaign, never evidence for a
verdict: nothing judges a row by it."""

from collections import defaultdict
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

TIMING_SCHEMA_VERSION = 1
TIMING_FILE = "timing.json"

LaunchRole = Literal["target", "reference", "point", "attempt"]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LaunchTiming(_Frozen):
    """One server start-up: the campaign's target, a parity reference, a sweep point, or an
    attempt expected to be refused."""

    recipe: str
    role: LaunchRole
    started_at: datetime
    startup_s: float = Field(ge=0, description="Until ready, or until refused / timed out.")
    became_ready: bool
    stopped_at: datetime | None = None
    reused: int = Field(default=0, ge=0, description="Later requests served by this launch.")

    @property
    def alive_s(self) -> float | None:
        if self.stopped_at is None:
            return None
        return max(0.0, (self.stopped_at - self.started_at).total_seconds())


class GateTiming(_Frozen):
    gate: str
    row: str
    recipe: str
    started_at: datetime
    finished_at: datetime
    overlapped_with: str | None = None
    """What ran at the same time (e.g. the target's start-up beside an offline checkpoint gate)."""

    @property
    def seconds(self) -> float:
        return max(0.0, (self.finished_at - self.started_at).total_seconds())


class RunTiming(_Frozen):
    schema_version: int = TIMING_SCHEMA_VERSION
    kind: Literal["run-timing"] = "run-timing"
    run_id: str
    started_at: datetime
    finished_at: datetime
    launches: tuple[LaunchTiming, ...] = ()
    gates: tuple[GateTiming, ...] = ()

    @property
    def wall_s(self) -> float:
        return max(0.0, (self.finished_at - self.started_at).total_seconds())

    def seconds_by_gate(self) -> dict[str, float]:
        """Total gate seconds per gate id, largest first."""
        totals: dict[str, float] = defaultdict(float)
        for gate in self.gates:
            totals[gate.gate] += gate.seconds
        return dict(sorted(totals.items(), key=lambda kv: (-kv[1], kv[0])))

    def startup_by_role(self) -> dict[str, tuple[int, float]]:
        """(launch count, start-up seconds) per launch role."""
        totals: dict[str, tuple[int, float]] = {}
        for launch in self.launches:
            count, seconds = totals.get(launch.role, (0, 0.0))
            totals[launch.role] = (count + 1, seconds + launch.startup_s)
        return totals

    def serial_gate_s(self) -> float:
        """Gate seconds that ran alone (not overlapped with something else)."""
        return sum(g.seconds for g in self.gates if g.overlapped_with is None)
