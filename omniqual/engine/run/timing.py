"""Recording where a campaign's wall time goes: server start-ups (by role) and gates.

The campaign opens a :class:`TimingRecorder` for its plan; launches made anywhere below it (the
target, a parity reference, a sweep point, a refused attempt) find it through a context variable,
so no check or pool has to pass it along. At the end the recorder's :class:`RunTiming` is written
beside ``run.json`` as ``timing.json`` and journalled as a ``run-timing`` artifact."""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime

from omniqual.domain.result import GateResult
from omniqual.domain.timing import (
    TIMING_FILE,
    GateTiming,
    LaunchRole,
    LaunchTiming,
    RunTiming,
)
from omniqual.evidence.durable import write_atomic
from omniqual.evidence.store import RunWriter


@dataclass(slots=True)
class _Launch:
    recipe: str
    role: LaunchRole
    started_at: datetime
    startup_s: float | None = None
    became_ready: bool = False
    stopped_at: datetime | None = None
    reused: int = 0


@dataclass(slots=True)
class TimingRecorder:
    run_id: str
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    _launches: list[_Launch] = field(default_factory=list)
    _gates: list[GateTiming] = field(default_factory=list)

    def launch_started(self, recipe: str, role: LaunchRole) -> int:
        self._launches.append(_Launch(recipe, role, datetime.now(UTC)))
        return len(self._launches) - 1

    def launch_ended(self, handle: int, startup_s: float, *, ready: bool) -> None:
        entry = self._launches[handle]
        entry.startup_s, entry.became_ready = startup_s, ready

    def launch_stopped(self, handle: int) -> None:
        self._launches[handle].stopped_at = datetime.now(UTC)

    def launch_reused(self, handle: int) -> None:
        self._launches[handle].reused += 1

    def reused_by(self, recipe: str) -> None:
        """The latest target launch of ``recipe`` served a gate of another recipe."""
        for handle in range(len(self._launches) - 1, -1, -1):
            entry = self._launches[handle]
            if entry.recipe == recipe and entry.role == "target":
                entry.reused += 1
                return

    def gate(self, result: GateResult, recipe: str, overlapped_with: str | None = None) -> None:
        self._gates.append(GateTiming(
            gate=result.gate_id, row=result.row, recipe=recipe, started_at=result.started_at,
            finished_at=result.finished_at, overlapped_with=overlapped_with,
        ))  # fmt: skip

    def snapshot(self, finished_at: datetime | None = None) -> RunTiming:
        launches = tuple(
            LaunchTiming(
                recipe=e.recipe, role=e.role, started_at=e.started_at,
                startup_s=e.startup_s if e.startup_s is not None else 0.0,
                became_ready=e.became_ready, stopped_at=e.stopped_at, reused=e.reused,
            )
            for e in self._launches
        )  # fmt: skip
        return RunTiming(
            run_id=self.run_id, started_at=self.started_at,
            finished_at=finished_at or datetime.now(UTC), launches=launches,
            gates=tuple(sorted(self._gates, key=lambda g: g.started_at)),
        )  # fmt: skip


_current: ContextVar[TimingRecorder | None] = ContextVar("omniqual_timing", default=None)


def current() -> TimingRecorder | None:
    """The recorder of the plan being run here, if any."""
    return _current.get()


@contextmanager
def recording(recorder: TimingRecorder) -> Iterator[TimingRecorder]:
    token = _current.set(recorder)
    try:
        yield recorder
    finally:
        _current.reset(token)


def launch_started(recipe: str, role: LaunchRole) -> int | None:
    recorder = current()
    return None if recorder is None else recorder.launch_started(recipe, role)


def launch_ended(handle: int | None, startup_s: float, *, ready: bool) -> None:
    recorder = current()
    if recorder is not None and handle is not None:
        recorder.launch_ended(handle, startup_s, ready=ready)


def launch_stopped(handle: int | None) -> None:
    recorder = current()
    if recorder is not None and handle is not None:
        recorder.launch_stopped(handle)


def write_timing(writer: RunWriter, timing: RunTiming) -> None:
    """``timing.json`` beside the journal (atomically) and the same bytes as an artifact."""
    data = (timing.model_dump_json(indent=2) + "\n").encode("utf-8")
    writer.put_artifact(data, media_type="application/json", role="run-timing",
                        name=TIMING_FILE)  # fmt: skip
    write_atomic(writer.run_dir / TIMING_FILE, [data])
