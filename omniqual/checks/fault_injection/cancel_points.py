"""Cancellation at points of a request's life, each its own case: the injector holds a request at
the point (a ``hold`` arm: it waits there ``hold_s``, then goes on) and its client cancels it
while it is held; afterwards nothing of it may be left and the server must go on as before.

- ``cancel-before-admission``: peer A is held in its first denoise step, so the worker is busy;
  the request is sent behind it and cancelled while it waits (queued, before the engine admits
  it to the worker). A tripwire is then armed on its seed (a hold of no time in denoise): a
  request cancelled while queued that runs anyway fires it, and fails the case in any mode.
- ``cancel-after-encode``: held at the pipeline's latent preparation (prompt encoded, no step);
- ``cancel-before-decode``: held before the VAE decode;
- ``cancel-during-output``: held in the API server's encoding of the output for the response.

A sync client cancels by disconnecting; a job's client by ``DELETE``. The peers are sent while
the request is held (the queued case's peer is the held one) and must answer their solo
same-seed outputs (``peers``). Then (``judge_held``): the cancel landed while held, nothing of
the request is left (a job gone or ended uncompleted, nothing served, none of the case's jobs
listed unfinished; ``/metrics`` counts no request running or waiting), ``/health`` and the
known-good request as before any fault (same bytes), resources back within the bounds. A cancel
is no fault: whatever the row's restart policy, the server must stay up. A hold that never fires
is a point this release has no hook for on this row: invalid, with that reason.
"""

import asyncio
import time
from dataclasses import dataclass, field

from omniqual.checks.abort.peer_truth import PEER_SEED
from omniqual.checks.fault_injection.cases import FaultCase
from omniqual.checks.fault_injection.control import new_arm
from omniqual.checks.fault_injection.driver import KNOWN_GOOD_SEED, CaseDriver, Served
from omniqual.checks.fault_injection.jobs import JobCaseDriver, JobSeen
from omniqual.checks.fault_injection.judge import After, Seen, Verdict, judge_after
from omniqual.checks.fault_injection.judge_held import (
    judge_cancelled_job,
    judge_cut,
    judge_left,
    judge_ran,
    judge_reached,
)
from omniqual.checks.fault_injection.judge_jobs import judge_listing
from omniqual.checks.fault_injection.peers import PeerTruths, answered, judge_peer_outputs
from omniqual.checks.fault_injection.processes import tree_pids
from omniqual.checks.fault_injection.resources import Baseline, Growth, judge_kept
from omniqual.checks.soak.watch import ResourceWatch
from omniqual.domain.evidence import CaseResult
from omniqual.domain.fault_injection import FaultArm, FaultMode, FaultRecord, FaultStage
from omniqual.domain.matrix import RestartPolicy
from omniqual.domain.outcomes import GateOutcome


@dataclass(frozen=True, slots=True)
class Held:
    """What the clients saw of one cancel point."""

    seen: Seen | None = None  # the cancelled sync request
    job: JobSeen | None = None  # the cancelled job
    peers: tuple[Seen, ...] = ()
    peer_jobs: tuple[JobSeen, ...] = ()
    ran: FaultRecord | None = None  # the tripwire's firing: the queued request ran
    tripwire: str = ""  # its arm id


@dataclass(frozen=True, slots=True)
class Recorded:
    """One cancel point's evidence, for the gate to keep."""

    result: CaseResult
    summary: dict[str, object]
    verdict: Verdict
    exited: bool
    recovered_in_s: float | None = None
    leak: Growth = field(default_factory=dict)


async def _cut(task: "asyncio.Task[Seen]", started: float, case: FaultCase) -> Seen:
    """Cancel the request's client: the connection closes, which the server sees as a client
    disconnect. An answer that came first is what the client saw instead."""
    if task.done():
        return task.result()
    task.cancel()
    try:
        return await task  # the answer won the race against the cancel
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise  # we ourselves are being cancelled, not just the request
    return Seen("cut", time.monotonic() - started, detail=f"client disconnected {case.point}")


async def _tripwire(driver: CaseDriver, case: FaultCase, seed: int) -> FaultArm:
    """After the queued request's cancel: any denoise step of it fires this (and goes on)."""
    arm = new_arm(case.id, FaultStage.DENOISE, FaultMode.HOLD, request_seed=seed)
    await driver.served.channel.arm(arm)
    return arm


async def _ran(driver: CaseDriver, tripwire: FaultArm, solo_s: float) -> FaultRecord | None:
    """Whether the queued request ran: the held peer is done, so it would run now, in a solo
    run's time (plus the time it waited)."""
    await asyncio.sleep(solo_s + driver.params.queue_s)
    await driver.served.channel.disarm()
    return await driver.fired(tripwire)


async def _sync(driver: CaseDriver, case: FaultCase, hold: FaultArm, seed: int,
                solo_s: float) -> Held:  # fmt: skip
    p = driver.params

    def send(call_seed: int, peer: bool = False) -> "asyncio.Task[Seen]":
        call = driver.peer(call_seed) if peer else driver.call(call_seed)
        return asyncio.create_task(driver.send(call, p.request_timeout_s))

    if case.queued:
        blocker = send(0, peer=True)
        if await driver.wait_fired(hold, p.error_deadline_s, blocker) is None:
            return Held(peers=(await blocker,))
        target, started = send(seed), time.monotonic()
        await asyncio.sleep(p.queue_s)
        seen = await _cut(target, started, case)
        tripwire = await _tripwire(driver, case, seed)
        held_peer = await blocker
        return Held(seen, peers=(held_peer,), ran=await _ran(driver, tripwire, solo_s),
                    tripwire=tripwire.arm_id)  # fmt: skip
    target, started = send(seed), time.monotonic()
    if await driver.wait_fired(hold, p.error_deadline_s, target) is None:
        return Held(await target)
    sent = [send(i, peer=True) for i in range(p.peers)]
    seen = await _cut(target, started, case)
    return Held(seen, peers=tuple(await asyncio.gather(*sent)))


async def _jobs(driver: JobCaseDriver, case: FaultCase, hold: FaultArm, seed: int,
                solo_s: float) -> Held:  # fmt: skip
    p = driver.params
    follow_s = p.request_timeout_s + p.hold_s

    def peer(index: int) -> "asyncio.Task[JobSeen]":
        return asyncio.create_task(driver.run_job(driver.peer(index), follow_s))

    if case.queued:
        blocker = peer(0)
        if await driver.wait_fired(hold, p.error_deadline_s, blocker) is None:
            return Held(peer_jobs=(await blocker,))
        job = await driver.run_job(driver.call(seed), p.error_deadline_s,
                                   cancel_after_s=p.queue_s)  # fmt: skip
        tripwire = await _tripwire(driver, case, seed)
        held_peer = await blocker
        return Held(job=job, peer_jobs=(held_peer,), ran=await _ran(driver, tripwire, solo_s),
                    tripwire=tripwire.arm_id)  # fmt: skip
    target = asyncio.create_task(driver.run_job(driver.call(seed), p.error_deadline_s + p.hold_s,
                                                cancel_on=hold))  # fmt: skip
    if await driver.wait_fired(hold, p.error_deadline_s, target) is None:
        return Held(job=await target)
    sent = [peer(i) for i in range(p.peers)]
    return Held(job=await target, peer_jobs=tuple(await asyncio.gather(*sent)))


def _peer_line(case: FaultCase, held: Held, verdict: Verdict) -> str:
    """Peers must answer beside a cancel; one that failed was taken down by it."""
    peers: tuple[Seen | JobSeen, ...] = held.peers or held.peer_jobs
    failed = [p for p in peers if not p.outputs]
    for peer in failed:
        verdict.failures.append(f"a peer failed ({peer.text()}) beside a request cancelled "
                                f"{case.point}: a cancel must not take its peers down")
    return f"peers {len(peers) - len(failed)}/{len(peers)} answered"


async def run_cancel_point(driver: CaseDriver, case: FaultCase, served: Served,
                           watch: ResourceWatch, base: Baseline, *, baseline: str | None,
                           truths: PeerTruths | None, solo_s: float) -> Recorded:  # fmt: skip
    p = driver.params
    before_tree = tree_pids(served.pid)
    seed = driver.next_seed()
    hold = new_arm(case.id, case.stage, FaultMode.HOLD, hang_s=p.hold_s,
                   request_seed=PEER_SEED if case.queued else seed)  # fmt: skip
    await served.channel.arm(hold)
    if isinstance(driver, JobCaseDriver):
        held = await _jobs(driver, case, hold, seed, solo_s)
    else:
        held = await _sync(driver, case, hold, seed, solo_s)
    await served.channel.disarm()
    # The held request's worker may still sleep out its hold: the server gets that long more.
    after = await driver.aftermath(before_tree, baseline, KNOWN_GOOD_SEED, p.hold_s)
    fired = await driver.fired(hold)
    v = Verdict()
    if judge_reached(case, fired, v):
        if held.job is not None:
            judge_cancelled_job(case, held.job, v)
        elif held.seen is not None:
            judge_cut(case, held.seen, v)
        if case.queued:
            judge_ran(held.ran, v)
    lines = [_peer_line(case, held, v)]
    peers: tuple[Seen | JobSeen, ...] = held.peers or held.peer_jobs
    lines.append(judge_peer_outputs(truths, answered(peers), v,
                                    f"a request cancelled {case.point}"))  # fmt: skip
    if isinstance(driver, JobCaseDriver) and not after.exited:
        jobs = [j for j in (held.job, *held.peer_jobs) if j is not None]
        lines.append(judge_listing(await driver.unfinished(jobs), v))
        await driver.forget(jobs)
    # A cancel is no fault: the server must stay up whatever the row's restart policy says.
    judge_after(RestartPolicy.RECOVERS, after, p.recover_deadline_s, p.exit_deadline_s, v)
    leak: Growth = {}
    if after.recovered:
        lines.append(judge_left(await driver.requests_left(p.settle_max_s), p.settle_max_s, v))
        leak = await judge_kept(watch, base, p, v)
    arms = {hold.arm_id, held.tripwire} - {""}
    records = [r for r in await served.channel.records() if r.arm_id in arms]
    return _recorded(driver, case, held, hold, fired, after, v, lines, leak, records)


def _recorded(driver: CaseDriver, case: FaultCase, held: Held, hold: FaultArm,
              fired: FaultRecord | None, after: After, v: Verdict, lines: list[str],
              leak: Growth, records: list[FaultRecord]) -> Recorded:  # fmt: skip
    outcome = GateOutcome.FAILED if v.failures else (
        GateOutcome.INVALID if v.invalid else GateOutcome.PASSED)  # fmt: skip
    client = held.job.text() if held.job is not None else (
        held.seen.text() if held.seen is not None else "not sent (the hold never fired)")
    health = (f"recovered in {after.recovered_in_s:.1f} s" if after.recovered_in_s is not None
              else "exited" if after.exited else "neither") + f" ({after.health})"  # fmt: skip
    lines = [line for line in lines if line]
    note = "; ".join(dict.fromkeys([*v.failures, *v.invalid, *lines, *v.notes]))
    result = CaseResult(
        id=case.id, endpoint=driver.kind.value, sent=case.describe(0),
        expected_status="cancelled while held; nothing left; server up, next request as before",
        observed_status=f"{client}; {health}", outcome=outcome, note=note[:600])  # fmt: skip
    summary: dict[str, object] = {
        "injected": case.describe(0), "stage": case.stage.value, "mode": FaultMode.HOLD.value,
        "point": case.point, "held_seed": hold.request_seed, "hold_s": hold.hang_s,
        "where": fired.where if fired else "", "fired_in": fired.request_id if fired else "",
        "client": client, "peers": "; ".join(lines), "health": health,
        "policy": "stays up (a cancel is no fault)", "restart_required": after.exited,
        "recovered": after.recovered, "recovered_in_s": after.recovered_in_s,
        "same_output": after.same_output, "exited": after.exited,
        "orphans": list(after.orphans), "next_request": after.next_request,
        "ran_after_cancel": None if held.ran is None else held.ran.model_dump(mode="json"),
        "tripwire": held.tripwire, "leak": leak, "outcome": outcome.value,
        "records": [r.model_dump(mode="json") for r in records],
    }  # fmt: skip
    return Recorded(result, summary, v, after.exited, after.recovered_in_s, leak)

