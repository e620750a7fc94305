"""The agent's wire shapes: versioned, strict about unknown keys, absent figures kept absent."""

import pytest
from pydantic import ValidationError

from omniqual.domain.agent import (
    AGENT_SCHEMA_VERSION,
    AgentReadings,
    DirCount,
    FaultRecords,
    TreeState,
)
from omniqual.domain.fault_injection import FaultEvent, FaultRecord


def _readings(**changes: object) -> AgentReadings:
    base: dict[str, object] = {
        "state": "running", "pid": 42, "at_unix": 1.5, "processes": 2, "rss_bytes": 10,
        "pss_bytes": None, "uss_bytes": None, "open_fds": 7, "threads": 3, "cpu_s": 0.25,
    }  # fmt: skip
    return AgentReadings.model_validate({**base, **changes})


def test_readings_round_trip_with_their_schema_version() -> None:
    readings = _readings(dir_files=[{"path": "/tmp/x", "files": None}])
    again = AgentReadings.model_validate_json(readings.model_dump_json())
    assert again == readings
    assert again.schema_version == AGENT_SCHEMA_VERSION
    assert again.state is TreeState.RUNNING
    assert again.pss_bytes is None  # unreadable smaps stays absent, never 0
    assert again.dir_files == (DirCount(path="/tmp/x", files=None),)


def test_unknown_keys_and_negative_sizes_are_refused() -> None:
    with pytest.raises(ValidationError):
        _readings(surprise=1)
    with pytest.raises(ValidationError):
        _readings(rss_bytes=-1)
    with pytest.raises(ValidationError):
        _readings(state="sleeping")


def test_record_pages_carry_the_injector_records() -> None:
    record = FaultRecord(event=FaultEvent.LOADED, pid=7, at_unix=2.0)
    page = FaultRecords(after=3, next=4, records=(record,))
    assert FaultRecords.model_validate_json(page.model_dump_json()).records[0].pid == 7
    with pytest.raises(ValidationError):
        FaultRecords(after=-1, next=0)
