"""How busy a load run kept the server, from each request's send and end times alone.

Two figures over the run's span (the first send to the last end):

- the **busy fraction**: the share of the span during which at least one request was
  outstanding (sent and not yet answered);
- the **mean in flight**: the outstanding request-seconds per second of the span (Little's L).

A run above the server's capacity builds a backlog that keeps the server busy until the run
drains, so a server left idle a measurable share of the span was not overloaded (on average over
the run). The converse does not hold: a server may be busy throughout while below capacity, e.g.
serving several slow requests at once. The span opens at the first send, not at the schedule's
zero: before the first send nothing could be outstanding, and that gap is the arrival draw's.

Client-side times: a request is outstanding from when it was sent until its answer (or its cut,
or the deadline) reached the client. Work a server keeps doing on a request the client cut off
is not seen, so the busy fraction can only read low by that much.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from omniqual.loadgen.records import RequestRecord


@dataclass(frozen=True, slots=True)
class Occupancy:
    span_s: float
    """From the first send to the last end (0 without requests)."""
    busy_s: float
    """Time during which at least one request was outstanding."""
    outstanding_s: float
    """The requests' outstanding times, summed (request-seconds)."""
    requests: int

    @property
    def busy_fraction(self) -> float | None:
        """``busy_s`` per second of the span (None: no span to divide by)."""
        return self.busy_s / self.span_s if self.span_s > 0 else None

    @property
    def idle_s(self) -> float:
        return self.span_s - self.busy_s

    @property
    def mean_in_flight(self) -> float | None:
        """Requests outstanding on average over the span (None: no span)."""
        return self.outstanding_s / self.span_s if self.span_s > 0 else None


def occupancy(intervals: Iterable[tuple[float, float]]) -> Occupancy:
    """Busy time and span of ``(sent_s, ended_s)`` intervals: overlapping intervals count once
    towards busy time and each in full towards the outstanding time."""
    ordered = sorted(intervals)
    for start, end in ordered:
        if end < start:
            raise ValueError(f"an interval ends before it starts: ({start}, {end})")
    if not ordered:
        return Occupancy(0.0, 0.0, 0.0, 0)
    busy = 0.0
    open_start, open_end = ordered[0]
    for start, end in ordered[1:]:
        if start > open_end:  # an idle gap: the busy stretch before it is closed
            busy += open_end - open_start
            open_start, open_end = start, end
        else:
            open_end = max(open_end, end)
    busy += open_end - open_start
    last_end = max(end for _, end in ordered)
    outstanding = sum(end - start for start, end in ordered)
    return Occupancy(last_end - ordered[0][0], busy, outstanding, len(ordered))


def request_occupancy(records: Iterable[RequestRecord]) -> Occupancy:
    """:func:`occupancy` of every request that was sent, whatever its outcome: a request cut or
    still in flight at the deadline was outstanding until then (its ``ended_s``)."""
    return occupancy(
        (record.sent_s, record.ended_s)
        for record in records
        if record.sent_s is not None and record.ended_s is not None
    )
