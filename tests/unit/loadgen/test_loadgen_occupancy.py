"""How busy a run kept the server, from each request's send and end times: the busy fraction
(at least one request outstanding) over the span from the first send to the last end, and the
mean number outstanding."""

from __future__ import annotations

import pytest

from omniqual.loadgen.occupancy import Occupancy, occupancy, request_occupancy
from omniqual.loadgen.records import RecordStatus, RequestRecord


def _record(index: int, sent: float | None, ended: float | None,
            status: RecordStatus = RecordStatus.OK) -> RequestRecord:  # fmt: skip
    return RequestRecord(index, "small", status, sent or 0.0, sent, sent, ended, False)


def test_overlapping_requests_count_once_towards_busy_time() -> None:
    # Busy 0-3 (two overlapping requests) and 5-6; idle 3-5: 4 s busy of a 6 s span.
    found = occupancy([(0.0, 2.0), (1.0, 3.0), (5.0, 6.0)])
    assert found == Occupancy(span_s=6.0, busy_s=4.0, outstanding_s=5.0, requests=3)
    assert found.busy_fraction == pytest.approx(4.0 / 6.0)
    assert found.idle_s == pytest.approx(2.0)
    assert found.mean_in_flight == pytest.approx(5.0 / 6.0)


def test_the_span_opens_at_the_first_send_not_at_the_schedules_zero() -> None:
    # Nothing could be outstanding before the first send: that gap is the arrival draw's.
    found = occupancy([(2.0, 3.0), (4.0, 5.0)])
    assert found.span_s == pytest.approx(3.0)
    assert found.busy_fraction == pytest.approx(2.0 / 3.0)


def test_a_backlog_keeps_the_server_busy_throughout() -> None:
    # Each request is still outstanding when the next one is sent: never idle.
    found = occupancy([(float(k), float(k) + 3.0) for k in range(10)])
    assert found.busy_fraction == pytest.approx(1.0)
    assert found.mean_in_flight == pytest.approx(30.0 / 12.0)


def test_no_request_sent_has_no_busy_fraction() -> None:
    found = occupancy([])
    assert found.busy_fraction is None and found.mean_in_flight is None


def test_an_interval_that_ends_before_it_starts_is_refused() -> None:
    with pytest.raises(ValueError, match="ends before it starts"):
        occupancy([(2.0, 1.0)])


def test_records_count_from_send_to_end_whatever_their_outcome() -> None:
    records = [
        _record(0, 1.0, 2.0),
        _record(1, 1.5, 4.0, RecordStatus.ABORTED),  # a cut request was outstanding until cut
        _record(2, None, None, RecordStatus.NOT_ISSUED),  # never sent: never outstanding
        _record(3, 6.0, 7.0, RecordStatus.CANCELLED),  # in flight at the deadline
    ]
    found = request_occupancy(records)
    assert found.requests == 3
    assert found.span_s == pytest.approx(6.0)
    assert found.busy_s == pytest.approx(4.0)
