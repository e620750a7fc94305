"""What a load run records: per-request outcomes and timings, and the run's settings and effects.

All times are seconds on the event loop's monotonic clock, relative to the run start (the
schedule's time zero). ``RecordRow`` is the JSONL shape of one record for callers that persist
the raw series.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from omniqual.loadgen.schedule import ArrivalPattern


class OutcomeStatus(StrEnum):
    """What a ``Send`` reports for a request it handled."""

    OK = "ok"
    ERROR = "error"
    ABORTED = "aborted"
    TIMEOUT = "timeout"


class RecordStatus(StrEnum):
    """A request's final state in the run: a Send outcome, or one the issuer imposed."""

    OK = "ok"
    ERROR = "error"
    ABORTED = "aborted"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"  # still waiting for a slot or in flight at the hard deadline
    NOT_ISSUED = "not_issued"  # its scheduled time was never reached before the deadline


@dataclass(frozen=True, slots=True)
class SendOutcome:
    status: OutcomeStatus
    status_code: int | None = None
    error_kind: str | None = None
    server_timings_s: tuple[tuple[str, float], ...] = ()
    peak_memory_mb: float | None = None
    """The server's own peak memory figure for this request, when it reported one."""


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One planned request. ``dispatched_s`` is when the issuer woke for the slot;
    ``sent_s`` is when Send was called, later only if it waited for an in-flight slot."""

    index: int
    entry: str
    status: RecordStatus
    scheduled_s: float
    dispatched_s: float | None
    sent_s: float | None
    ended_s: float | None
    waited_for_slot: bool
    status_code: int | None = None
    error_kind: str | None = None
    server_timings_s: tuple[tuple[str, float], ...] = ()
    peak_memory_mb: float | None = None

    @property
    def responded(self) -> bool:
        """Send returned an outcome (rather than being cancelled or never called)."""
        return self.status not in (RecordStatus.CANCELLED, RecordStatus.NOT_ISSUED)

    @property
    def issue_lag_s(self) -> float | None:
        """Scheduler lateness: dispatch minus schedule, excluding in-flight-cap waiting."""
        return None if self.dispatched_s is None else self.dispatched_s - self.scheduled_s

    @property
    def slot_wait_s(self) -> float | None:
        if self.dispatched_s is None or self.sent_s is None:
            return None
        return self.sent_s - self.dispatched_s

    @property
    def latency_from_schedule_s(self) -> float | None:
        """Coordinated-omission-free latency: every client-side delay is charged to the run."""
        if not self.responded or self.ended_s is None:
            return None
        return self.ended_s - self.scheduled_s

    @property
    def latency_from_send_s(self) -> float | None:
        if not self.responded or self.ended_s is None or self.sent_s is None:
            return None
        return self.ended_s - self.sent_s


@dataclass(frozen=True, slots=True)
class RequestedLoad:
    pattern: ArrivalPattern
    rate: float | None
    cv: float | None
    duration_s: float | None
    count: int | None
    seed: int | None
    planned_count: int
    window_s: float
    in_flight_cap: int | None
    deadline_s: float | None

    @property
    def planned_rate(self) -> float:
        return self.planned_count / self.window_s if self.window_s > 0 else 0.0


@dataclass(frozen=True, slots=True)
class EffectiveLoad:
    issued: int  # Send was called
    responded: int  # Send returned an outcome (any status)
    achieved_issue_rate: float  # issued / max(window, last send)
    achieved_completion_rate: float  # responded / actual duration
    actual_duration_s: float  # run start to the last request's end (drain included)
    last_issue_s: float | None
    max_issue_lag_s: float | None
    p99_issue_lag_s: float | None
    waited_for_slot: int
    total_slot_wait_s: float
    max_slot_wait_s: float
    max_in_flight: int


@dataclass(frozen=True, slots=True)
class LoadRun:
    requested: RequestedLoad
    effective: EffectiveLoad
    records: tuple[RequestRecord, ...]
    started_at_unix: float

    def rows(self) -> Iterator[RecordRow]:
        return (RecordRow.from_record(record) for record in self.records)


class RecordRow(BaseModel):
    """One request as a JSONL line (derived latencies included for readers without this code)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int
    entry: str
    status: RecordStatus
    scheduled_s: float
    dispatched_s: float | None
    sent_s: float | None
    ended_s: float | None
    waited_for_slot: bool
    issue_lag_s: float | None
    slot_wait_s: float | None
    latency_from_schedule_s: float | None
    latency_from_send_s: float | None
    status_code: int | None
    error_kind: str | None
    server_timings_s: dict[str, float]
    peak_memory_mb: float | None = None

    @classmethod
    def from_record(cls, record: RequestRecord) -> RecordRow:
        return cls(
            index=record.index,
            entry=record.entry,
            status=record.status,
            scheduled_s=record.scheduled_s,
            dispatched_s=record.dispatched_s,
            sent_s=record.sent_s,
            ended_s=record.ended_s,
            waited_for_slot=record.waited_for_slot,
            issue_lag_s=record.issue_lag_s,
            slot_wait_s=record.slot_wait_s,
            latency_from_schedule_s=record.latency_from_schedule_s,
            latency_from_send_s=record.latency_from_send_s,
            status_code=record.status_code,
            error_kind=record.error_kind,
            server_timings_s=dict(record.server_timings_s),
            peak_memory_mb=record.peak_memory_mb,
        )
