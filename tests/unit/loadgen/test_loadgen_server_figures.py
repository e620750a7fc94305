"""The issuer keeps the server's own figures a Send reports: stage timings and peak memory reach
the request record and its JSONL row (an older row without peak memory still reads)."""

from __future__ import annotations

import asyncio

from omniqual.loadgen.issuer import issue
from omniqual.loadgen.records import OutcomeStatus, RecordRow, SendOutcome
from omniqual.loadgen.schedule import constant_schedule
from omniqual.loadgen.workload import PlannedRequest, WorkloadSpec, plan_requests

_SPEC = WorkloadSpec.model_validate(
    {"name": "w", "entries": [{"name": "img", "task": "t2i", "endpoint": "image", "weight": 1}]}
)


async def _send(planned: PlannedRequest) -> SendOutcome:
    return SendOutcome(OutcomeStatus.OK, 200, None, (("stage:P.diffuse", 0.01),),
                       100.0 + planned.index)  # fmt: skip


def test_peak_memory_reaches_the_record_and_its_row() -> None:
    schedule = constant_schedule(50.0, count=3)
    run = asyncio.run(issue(plan_requests(_SPEC, schedule), schedule, _send))
    assert [r.peak_memory_mb for r in run.records] == [100.0, 101.0, 102.0]
    row = next(iter(run.rows()))
    assert row.peak_memory_mb == 100.0 and row.server_timings_s == {"stage:P.diffuse": 0.01}
    old = row.model_dump(mode="json")
    del old["peak_memory_mb"]
    assert RecordRow.model_validate(old).peak_memory_mb is None
