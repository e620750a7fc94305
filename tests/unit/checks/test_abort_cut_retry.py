"""A cut point the request ran short of is tried again before the case is invalid (a scripted
driver: which cut answers first, or which job is found finished before its DELETE, is given; no
server)."""

import asyncio
from typing import Any

from omniqual.checks.abort.cases import Case
from omniqual.checks.abort.params import AbortParams
from omniqual.checks.abort.plan import _cancel_case, run_cases
from omniqual.checks.load_binding import JobTrace
from omniqual.loadgen.workload import EndpointKind


class ScriptedDriver:
    """Sync endpoint; ``short`` answers (their durations, in order) before the cut is reached."""

    endpoint = EndpointKind.IMAGE
    path = "/v1/images/generations"

    def __init__(self, short: list[float]) -> None:
        self.solo_s = 1.0
        self.short = list(short)
        self.cuts: list[float] = []
        self.windows: list[float] = []

    async def reading(self) -> None:
        return None

    async def cut(self, case: Case, after_s: float, *, last: bool = True) -> bool | float:
        self.cuts.append(round(after_s, 3))
        if case.id == "disconnect-late" and self.short:
            took = self.short.pop(0)
            if last or took < 0.5 * self.solo_s:
                case.invalid.append(f"{case.id}: the cut point was not reached")
            return False if last or took < 0.5 * self.solo_s else took
        return True

    async def record_peer(self, case: Case) -> None:
        return None

    async def cut_behind_blocker(self, case: Case) -> None:
        return None

    async def judge_work(self, case: Case, **window: Any) -> None:
        self.windows.append(round(window["left_s"], 3))

    async def client_timeout(self, case: Case, after_s: float) -> bool:
        return True

    async def after(self, case: Case, left_s: float | None) -> None:
        return None


LATE_AT_85 = {"early": 0.15, "middle": 0.5, "late": 0.85}


def _late(cases: list[Case]) -> Case:
    return next(c for c in cases if c.id == "disconnect-late")


def test_a_late_cut_answered_early_is_tried_again_at_the_short_runs_fraction() -> None:
    driver = ScriptedDriver(short=[0.8])  # the first try finished in 0.8 s, before 0.85 s
    cases = asyncio.run(run_cases(driver, AbortParams(burst=0, points=LATE_AT_85)))  # type: ignore[arg-type]
    assert driver.cuts[2:4] == [0.85, 0.68]  # late, then late again at 0.85 x 0.8 s
    assert _late(cases).invalid == []
    assert driver.windows[3] == 0.12  # the work it had left: 15 % of the short run


def test_a_late_cut_never_reached_is_invalid_after_its_attempts() -> None:
    driver = ScriptedDriver(short=[0.8, 0.7, 0.6])
    cases = asyncio.run(run_cases(driver, AbortParams(burst=0, points=LATE_AT_85)))  # type: ignore[arg-type]
    assert driver.cuts[2:5] == [0.85, 0.68, 0.595]
    assert _late(cases).invalid == ["disconnect-late: the cut point was not reached"]
    assert len(driver.windows) == 4  # queued, early, middle, timeout: not the late cut


def test_an_answer_far_shorter_than_a_run_is_not_retried() -> None:
    """Answered in a fifth of the solo time: not a short run (an error, a cached answer), so the
    point is not chased down to it."""
    driver = ScriptedDriver(short=[0.2])
    cases = asyncio.run(run_cases(driver, AbortParams(burst=0, points=LATE_AT_85)))  # type: ignore[arg-type]
    assert driver.cuts[2:] == [0.85]  # the late point once, not again
    assert _late(cases).invalid == ["disconnect-late: the cut point was not reached"]


class ScriptedJobs:
    """Async video jobs; the first ``done_first`` jobs are found completed just before their
    DELETE (they ran short of the calibrated time), the rest still running."""

    endpoint = EndpointKind.VIDEO_ASYNC
    path = "/v1/videos"

    def __init__(self, done_first: int) -> None:
        self.solo_s = 0.2
        self.params = AbortParams()
        self.done_first = done_first
        self.created = 0
        self.deleted: list[str] = []
        self.discarded: list[str] = []
        self.windows: list[float] = []

    async def reading(self) -> None:
        return None

    async def create_job(self) -> JobTrace:
        self.created += 1
        return JobTrace(0, f"job-{self.created}", ["queued"])

    async def job_status(self, trace: JobTrace) -> str:
        return "completed" if self.created <= self.done_first else "in_progress"

    async def discard(self, trace: JobTrace) -> None:
        self.discarded.append(trace.job_id)

    async def delete(self, case: Case, trace: JobTrace, label: str = "DELETE") -> int:
        self.deleted.append(trace.job_id)
        return 200

    async def judge_work(self, case: Case, **window: Any) -> None:
        self.windows.append(window["left_s"])

    async def verify_cancelled(self, case: Case, trace: JobTrace) -> None:
        return None


def test_a_job_found_finished_before_its_delete_is_cut_again_on_a_new_job() -> None:
    driver = ScriptedJobs(done_first=1)
    case = Case("cancel-late", "DELETE /v1/videos/{id}", "-", "-")
    left = asyncio.run(_cancel_case(driver, case, 0.75))  # type: ignore[arg-type]
    assert driver.discarded == ["job-1"] and driver.deleted == ["job-2"]
    assert case.invalid == [] and case.failures == []
    assert driver.windows == [left] and 0 < left <= 0.25 * driver.solo_s


def test_a_job_finished_before_every_delete_leaves_the_case_invalid() -> None:
    driver = ScriptedJobs(done_first=3)
    case = Case("cancel-late", "DELETE /v1/videos/{id}", "-", "-")
    asyncio.run(_cancel_case(driver, case, 0.75))  # type: ignore[arg-type]
    assert driver.discarded == ["job-1", "job-2", "job-3"] and driver.deleted == []
    assert len(case.invalid) == 1 and "the cut point was not reached" in case.invalid[0]
    assert driver.windows == []  # no work judged for a cut that never landed
