"""The abort gate's case plan: which cuts a row gets and in what order. Async video jobs: DELETE
right after creation, while queued behind a peer job, early/middle/late, twice, and after
completion. Sync endpoints: disconnect while queued behind a peer and early/middle/late, a burst
of disconnects, a client-side timeout. Each cut's work is held to its bound (``bounds``) over a
window sized to the work the cut request had left."""

import asyncio
import math
import time

from omniqual.checks.abort.cases import AbortDriver, Case
from omniqual.checks.abort.params import AbortParams
from omniqual.checks.abort.peer_runs import job_content, judge_peer
from omniqual.checks.abort.peer_truth import PEER_SEED
from omniqual.checks.abort.work import WorkReading, WorkWindow
from omniqual.loadgen.workload import EndpointKind


async def run_cases(driver: AbortDriver, params: AbortParams) -> list[Case]:
    """Every case of the row's endpoint, in order, each followed by ``driver.after``."""
    solo, path, cases = driver.solo_s, driver.path, []
    if driver.endpoint is EndpointKind.VIDEO_ASYNC:
        plan: list[tuple[str, float | None]] = [("cancel-after-create", 0.0),
                                                ("cancel-queued", None)]  # fmt: skip
        plan += [(f"cancel-{name}", frac) for name, frac in params.points.items()]
        for case_id, frac in plan:
            sent = "-" if frac is None else f"DELETE at {frac * solo:.3f} s"
            case = Case(case_id, f"DELETE {path}/{{id}}", sent,
                        "DELETE 2xx; job gone or cancelled; no content")  # fmt: skip
            left = await _cancel_case(driver, case, frac)
            await driver.after(case, left)
            cases.append(case)
        cases.append(await _cancel_twice(driver))
        cases.append(await _cancel_finished(driver))
        return cases
    expected = "connection cut mid-request; server healthy; next request OK"
    margin = params.work_window_margin_s
    queued = Case("disconnect-queued", path, "cut while queued behind a peer", expected)
    await driver.record_peer(queued)
    before = await driver.reading()
    await driver.cut_behind_blocker(queued)
    # The peer is done: from now on the queued request must not run at all.
    await driver.judge_work(queued, queued=True, window_s=solo + margin, left_s=solo,
                            before=before, peers=1)  # fmt: skip
    await driver.after(queued, None)
    cases.append(queued)
    for name, frac in params.points.items():
        case = Case(f"disconnect-{name}", path, f"cut at {frac * solo:.3f} s", expected)
        service = solo
        for attempt in range(1, params.cut_attempts + 1):
            before = await driver.reading()
            cut = await driver.cut(case, frac * service, last=attempt == params.cut_attempts)
            if cut is True:
                await driver.judge_work(case, queued=False, left_s=(1 - frac) * service,
                                        window_s=(1 - frac) * service + margin, before=before)
            if cut is True or cut is False:
                break
            # Answered before the cut in a short run: cut the next at its fraction.
            service = min(service, cut)
        await driver.after(case, (1 - frac) * service)
        cases.append(case)
    if params.burst:
        burst = Case("disconnect-burst", path, f"{params.burst} cuts at {0.5 * solo:.3f} s",
                     expected)  # fmt: skip
        before = await driver.reading()
        cuts = [await driver.cut(burst, 0.5 * solo) for _ in range(params.burst)]
        if all(c is True for c in cuts):
            # Only the last cut is certain to have work left when the window opens.
            await driver.judge_work(burst, queued=False, before=before, left_s=0.5 * solo,
                                    window_s=0.5 * solo * params.burst + margin)  # fmt: skip
        await driver.after(burst, 0.5 * solo * params.burst)
        cases.append(burst)
    after_s = params.timeout_fraction * solo
    timeout = Case("client-timeout", path, f"client timeout {after_s:.3f} s",
                   "client gives up; server healthy; next request OK")  # fmt: skip
    before = await driver.reading()
    if await driver.client_timeout(timeout, after_s):
        left = (1 - params.timeout_fraction) * solo
        await driver.judge_work(timeout, queued=False, before=before, left_s=left,
                                window_s=left + margin)  # fmt: skip
    await driver.after(timeout, (1 - params.timeout_fraction) * solo)
    cases.append(timeout)
    return cases


async def _cancel_case(driver: AbortDriver, case: Case, frac: float | None) -> float:
    """One cancel; returns the work its job had left at the DELETE. A job found finished just
    before its DELETE ran short of the calibrated time (or the client was late): the DELETE
    would test nothing, so the point is tried again at its fraction of that shorter run, and
    when every attempt misses the case is invalid, as a sync cut that was answered first."""
    margin = driver.params.work_window_margin_s
    if frac is None:  # queued: a peer job goes first, its solo output recorded before
        await driver.record_peer(case)
        await _cancel_queued(driver, case, await driver.reading())
        return driver.solo_s
    service = driver.solo_s
    for attempt in range(1, driver.params.cut_attempts + 1):
        delay = frac * service
        before = await driver.reading()
        trace = await driver.create_job()
        if trace is None:
            case.fail("job creation failed")
            return service
        created = time.monotonic()
        if delay:
            await asyncio.sleep(delay)
        state = await driver.job_status(trace)
        if state not in ("queued", "in_progress"):
            ran = time.monotonic() - created
            case.observed.append(f"{state} within {ran:.3f} s, before the DELETE at {delay:.3f} s")
            await driver.discard(trace)
            if state != "completed":
                case.fail(f"job {trace.job_id} was {state} before any DELETE")
            elif attempt == driver.params.cut_attempts or ran < 0.5 * driver.solo_s:
                case.invalid.append(f"{case.id}: the job completed before the DELETE at "
                                    f"{delay:.3f} s; the cut point was not reached")  # fmt: skip
            else:
                service = min(service, ran)
                continue
            return 0.0
        status = await driver.delete(case, trace)
        if not 200 <= status < 300:
            case.fail(f"DELETE of a live job answered {status}, expected 2xx")
        await driver.judge_work(case, queued=False, window_s=service - delay + margin,
                                left_s=service - delay, before=before)  # fmt: skip
        await driver.verify_cancelled(case, trace)
        return service - delay
    return 0.0


async def _cancel_queued(driver: AbortDriver, case: Case, before: WorkReading | None) -> None:
    """A job cancelled while queued behind a peer. Its window opens at the cancel (a job that
    runs anyway runs while the cancel is re-checked) and closes a solo run plus the margin after
    the peer finished; the peer's tail after the cancel is measured and taken off. The job is
    queued and cancelled once the peer has run ``queued_after_peer_x_service`` of a solo run:
    the tail's work varies like any run's and is noise on the window, so the shorter it is, the
    better the window tells a run from none."""
    blocker = await driver.create_job(driver.calls.at(PEER_SEED))
    if blocker is not None:
        await asyncio.sleep(driver.params.queued_after_peer_x_service * driver.solo_s)
    trace = await driver.create_job()
    if trace is None:
        case.fail("job creation failed")
        return
    status = await driver.delete(case, trace)
    if not 200 <= status < 300:
        case.fail(f"DELETE of a live job answered {status}, expected 2xx")
    watching: asyncio.Task[WorkWindow] | None = None
    start = ends_at = None
    if driver.meter is not None and driver.work_base is not None:
        start, ends_at = await driver.meter.read(), [math.inf]
        watching = asyncio.create_task(driver.meter.watch_until(start, lambda: ends_at[0]))
    try:
        cancelled_at = time.monotonic()
        if blocker is not None:
            await driver.follow(blocker, settle_polls=1)
        # The peer's own work after the cancel: until it ended, not until the client noticed
        # (the settling polls after its end overlap a cancelled job that runs anyway).
        peer_tail = 0.0
        if blocker is not None:
            ended = blocker.ended_about if blocker.ended_about is not None else time.monotonic()
            peer_tail = max(0.0, ended - cancelled_at)
        if ends_at is not None:
            ends_at[0] = time.monotonic() + driver.solo_s + driver.params.work_window_margin_s
        await driver.verify_cancelled(case, trace)
        if watching is not None and start is not None:
            window = await watching
            driver.hold(case, window, start, queued=True, left_s=driver.solo_s, before=before,
                        peers=1, shared_s=peer_tail)  # fmt: skip
    finally:
        if watching is not None and not watching.done():
            watching.cancel()
    if blocker is None:
        case.fail("the peer job's creation failed")
        return
    case.observed.append(f"peer {'/'.join(blocker.terminal_states) or 'unfinished'}")
    if blocker.terminal_states != ("completed",) or blocker.content_status != 200:
        case.fail(f"peer job {blocker.job_id} did not complete cleanly "
                  f"({'/'.join(blocker.terminal_states)}, content {blocker.content_status})")
    else:
        judge_peer(driver, case, await job_content(driver, blocker))


async def _cancel_twice(driver: AbortDriver) -> Case:
    case = Case("cancel-twice", f"DELETE {driver.path}/{{id}}", "DELETE x2",
                "first 2xx, second 2xx or 404, never 5xx")  # fmt: skip
    trace = await driver.create_job()
    if trace is None:
        case.fail("job creation failed")
        return case
    await driver.delete(case, trace)
    second = await driver.delete(case, trace, "second DELETE")
    if second >= 500:
        case.fail(f"the second DELETE answered {second}: cancellation is not idempotent")
    await driver.verify_cancelled(case, trace)
    await driver.after(case, driver.solo_s)
    return case


async def _cancel_finished(driver: AbortDriver) -> Case:
    case = Case("cancel-finished", f"DELETE {driver.path}/{{id}}", "DELETE after completion",
                "exactly one terminal state; DELETE never 5xx")  # fmt: skip
    trace = await driver.create_job()
    if trace is None:
        case.fail("job creation failed")
        return case
    await driver.follow(trace, settle_polls=2)
    case.observed.append("/".join(trace.terminal_states) or "unfinished")
    if len(trace.terminal_states) != 1:
        case.fail(f"job {trace.job_id} reported terminal states "
                  f"{trace.terminal_states or ('none',)}; expected exactly one")
    status = await driver.delete(case, trace)
    if status >= 500:
        case.fail(f"DELETE of a finished job answered {status}")
    await driver.after(case, None)
    return case
