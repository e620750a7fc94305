"""The ``fault_injection`` check kind: faults injected inside the served process tree, one case
at a time, each judged on the faulted request, its peers, what the server did afterwards against
the row's restart policy, and the resources it kept.

The server carries the in-server injector (``serving``): a launched target is launched again
with it, and launched once more after a case that ended it. Before any fault the injector is
disarmed (a fault an earlier run left armed must not land in the calibration) and a known-good
request (fixed seed) is answered twice: its output bytes (on a videos-async row, a known-good
job's content) are what every recovery must give again; each peer (fixed seed too) is served
alone twice, and what it answers beside a fault must be that output (``peers``). A cancel
point injects no fault and runs through ``cancel_points``. Each case's evidence is a
``CaseResult``, a per-case summary in ``effective["fault_injection"]`` and the injector's own
record lines (stored as an artifact). A videos-async row runs its cases as jobs (``jobs``).
The injector is armed and read through ``control`` (an agent's, with ``--agent``), and the
resource readings come from :func:`observed` (the agent, or the local process tree), judged
against the instance's baseline before its first case (``resources``). A SIGKILL the harness
could not deliver (``kill``) makes its case invalid, never judged as a kill.
"""

import json
import shutil
import tempfile
import time
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import ClassVar, Literal

from omniqual.checks.base import CheckContext, CheckOutcome, TargetInfo, verdict
from omniqual.checks.fault_injection.cancel_points import Recorded, run_cancel_point
from omniqual.checks.fault_injection.cases import CASES, FaultCase
from omniqual.checks.fault_injection.control import (
    ControlError,
    FaultControl,
    FileControl,
    control_for,
    new_arm,
    of_arm,
)
from omniqual.checks.fault_injection.driver import KNOWN_GOOD_SEED, CaseDriver, Served
from omniqual.checks.fault_injection.jobs import JobCaseDriver, JobSeen
from omniqual.checks.fault_injection.judge import (
    Verdict,
    judge_after,
    judge_faulted,
    judge_peers,
)
from omniqual.checks.fault_injection.judge_jobs import (
    judge_faulted_job,
    judge_listing,
    judge_peer_jobs,
)
from omniqual.checks.fault_injection.kill import ON_ANOTHER_HOST
from omniqual.checks.fault_injection.params import FaultInjectionParams
from omniqual.checks.fault_injection.peers import (
    PeerTruths,
    answered,
    judge_peer_outputs,
    record_truths,
)
from omniqual.checks.fault_injection.processes import tree_pids
from omniqual.checks.fault_injection.resources import Baseline, Growth, judge_kept
from omniqual.checks.fault_injection.serving import given, given_url, instrumented
from omniqual.checks.load_binding import WireCall, endpoint_for, wire_call
from omniqual.checks.observed import observed
from omniqual.checks.soak.phases import solo_request
from omniqual.checks.soak.watch import ResourceWatch
from omniqual.domain.evidence import Artifact, CaseResult, Measurement
from omniqual.domain.fault_injection import FaultEvent, FaultMode, FaultRecord
from omniqual.domain.outcomes import GateOutcome
from omniqual.loadgen.workload import EndpointKind


class FaultInjectionCheck:
    kind: ClassVar[str] = "fault_injection"
    params_model: ClassVar[type[FaultInjectionParams]] = FaultInjectionParams
    needs: ClassVar[Literal["server", "checkpoint", "launches"]] = "launches"
    measures: ClassVar[bool] = True  # memory and FD figures after each fault
    # Its launches keep the host. Started beside other groups' work, the instrumented server
    # then idled until the host was free again (69 s on the main job); a host that pages out
    # memory left untouched for a minute (a kernel DAMON pageout scheme) gave its first fault
    # case +123 MiB on faulting it back in, read as a leak. Its memory figures need a server
    # that never sat idle for long before them.
    shares_start_ups: ClassVar[bool] = False

    async def run(self, ctx: CheckContext, params: FaultInjectionParams) -> CheckOutcome:
        endpoint = endpoint_for(ctx.row.get("api_mode"))
        if endpoint is None:
            return CheckOutcome(GateOutcome.SKIPPED, ("the row's api_mode has no HTTP endpoint",))
        temp = Path(tempfile.mkdtemp(prefix="omniqual-faults-"))
        try:
            return await _Run(ctx, params, endpoint, temp).all()
        finally:
            shutil.rmtree(temp, ignore_errors=True)


class _Run:
    def __init__(self, ctx: CheckContext, params: FaultInjectionParams, endpoint: EndpointKind,
                 temp: Path) -> None:  # fmt: skip
        self.ctx, self.params, self.endpoint, self.temp = ctx, params, endpoint, temp
        self.url = given_url(ctx)
        self.logs: list[Artifact] = []
        self.results: list[CaseResult] = []
        self.summary: dict[str, dict[str, object]] = {}
        self.failures: list[str] = []
        self.invalid: list[str] = []
        self.baseline: str | None = None
        self.truths: PeerTruths | None = None
        self.solo_s = 0.0
        self.launches = 0
        self.recovered_s: dict[str, float] = {}
        self.readings: dict[str, object] = {}
        self.started = time.monotonic()

    def call(self, seed: int) -> WireCall:
        return wire_call(solo_request(self.params.shape, self.endpoint, 0, seed))

    def peer_call(self, seed: int) -> WireCall:
        """A peer: one more denoise step than the faulted request, so a request-batch row never
        runs it in the faulted request's batch (see ``driver``)."""
        shape = self.params.shape
        if shape.steps is not None:
            shape = shape.model_copy(update={"steps": shape.steps + 1})
        return wire_call(solo_request(shape, self.endpoint, 0, seed))

    def serve(self, channel: FaultControl) -> AbstractAsyncContextManager[Served | str]:
        self.launches += 1
        if self.url is not None or not isinstance(channel, FileControl):
            return given(self.ctx, self.url or "", channel)
        sub = self.temp / f"tmp{self.launches}"
        sub.mkdir()
        return instrumented(self.ctx, channel, sub, self.launches, self.logs)

    async def all(self) -> CheckOutcome:
        channel = control_for(self.ctx.target, self.url, self.params, self.temp)
        if isinstance(channel, str):
            return CheckOutcome(GateOutcome.INVALID, (channel,))
        try:
            return await self._all(channel)
        finally:
            channel.close()

    async def _all(self, channel: FaultControl) -> CheckOutcome:
        pending = [CASES[c] for c in self.params.cases]
        try:
            await self._serve_all(channel, pending)
        except ControlError as exc:
            self.invalid.append(f"{exc}; {len(pending)} case(s) not run")
        records: list[FaultRecord] = []
        try:
            await channel.disarm()
            records = await channel.records()
        except ControlError as exc:
            if not any(i.startswith(str(exc)) for i in self.invalid):
                self.invalid.append(str(exc))
        return self._outcome(records)

    async def _serve_all(self, channel: FaultControl, pending: list[FaultCase]) -> None:
        while pending:
            async with self.serve(channel) as served:
                if isinstance(served, str):
                    self.invalid.append(served)
                    return
                ended = await self._cases(served, pending)
                if ended and self.url is not None and pending:
                    self.invalid.append(f"the server given by URL ended; {len(pending)} case(s) "
                                        "not run (restart it and run them with params.cases)")
                    return

    async def _cases(self, served: Served, pending: list[FaultCase]) -> bool:
        """Run cases on one instance until one ends it (True) or none is left (False)."""
        p = self.params
        async with served.make_client() as client, served.make_client() as side:
            kind = JobCaseDriver if self.endpoint is EndpointKind.VIDEO_ASYNC else CaseDriver
            driver = kind(served, client, side, p, self.endpoint, self.call, self.peer_call)
            if self.baseline is None and not await self._calibrate(driver):
                pending.clear()
                return False
            if served.loaded:
                self.readings["injector"] = served.loaded
            target = TargetInfo(
                url=served.url, pid=served.pid, agent=self.ctx.target.agent,
                temp_dirs=() if self.url else (self.temp / f"tmp{self.launches}",))  # fmt: skip
            async with (observed(target, p.watch_dirs) as seen,
                        ResourceWatch(side, tree=seen.tree, watch_dirs=seen.watch_dirs,
                                      interval_s=0.5) as watch):  # fmt: skip
                self.readings.update({"source": seen.source, **seen.details})
                base = Baseline(await watch.snapshot(), pending[0].id if pending else "")
                while pending:
                    budget = self.ctx.gate.budget_s
                    if budget is not None and time.monotonic() - self.started > budget:
                        self.invalid.append(f"budget of {budget:g} s spent before case(s) "
                                            f"{', '.join(c.id for c in pending)}")  # fmt: skip
                        pending.clear()
                        return False
                    case = pending.pop(0)
                    self.ctx.progress(f"fault-injection: {case.id}", None)
                    exited = await self._case(driver, case, served, watch, base)
                    if exited:
                        return True
        return False

    async def _calibrate(self, driver: CaseDriver) -> bool:
        # A fault left armed (a run stopped between an arming and its disarming, or another
        # user's) would land in the known-good request and read as a server that fails before
        # any fault.
        await driver.served.channel.disarm()
        first, what = await driver.known_good(KNOWN_GOOD_SEED)
        started = time.monotonic()
        second, what2 = await driver.known_good(KNOWN_GOOD_SEED)
        self.solo_s = time.monotonic() - started
        if first is None or second is None:
            self.failures.append("the known-good request failed before any fault "
                                 f"({what}, {what2})")
            return False
        if first != second:
            self.invalid.append("the known-good request gives other bytes on each run before any "
                                "fault: a state leak could not be told from run-to-run noise")
            return False
        self.baseline = first
        truths = await record_truths(driver, self.ctx.row.get("execution"), self.params.tolerance)
        if isinstance(truths, str):
            self.invalid.append(f"{truths}: the peers beside each fault could not be judged")
            return False
        self.truths = truths
        return True

    async def _case(self, driver: CaseDriver, case: FaultCase, served: Served,
                    watch: ResourceWatch, base: Baseline) -> bool:  # fmt: skip
        p, steps = self.params, self.params.shape.steps or 1
        if case.hold_cancel:
            return self._keep(case, await run_cancel_point(
                driver, case, served, watch, base, baseline=self.baseline, truths=self.truths,
                solo_s=self.solo_s))  # fmt: skip
        if case.sigkill and not served.channel.local:
            self._not_run(case, steps, f"SIGKILL cannot be delivered: {ON_ANOTHER_HOST}")
            return False
        before_tree = tree_pids(served.pid)
        hang = p.kill_hold_s if case.sigkill else p.hang_s if case.mode is FaultMode.HANG else (
            p.late_s if case.mode is FaultMode.LATE else 0.0)  # fmt: skip
        arm = new_arm(case.id, case.stage, case.mode, step=case.step_index(steps), hang_s=hang,
                      request_seed=driver.next_seed())  # fmt: skip
        await served.channel.arm(arm)
        jobs: list[JobSeen] = []
        if isinstance(driver, JobCaseDriver):
            job, peer_jobs, kill = await driver.inject_jobs(case, arm)
            jobs = [job, *peer_jobs]
        else:
            seen, peers, kill = await driver.inject(case, arm, self.solo_s)
        await served.channel.disarm()
        wait = p.hang_s if case.mode is FaultMode.HANG and not case.sigkill else (
            p.late_s if case.cancel else 0.0)  # fmt: skip
        after = await driver.aftermath(before_tree, self.baseline, KNOWN_GOOD_SEED, wait)
        records = await of_arm(served.channel, arm.arm_id)
        fired = [r for r in records if r.event is FaultEvent.FIRED]
        v = Verdict()
        undelivered = kill is not None and not kill.sent
        if kill is not None and not kill.sent:
            v.invalid.append(kill.line)
        # Where the kill was not delivered the worker was only held: its request completes when
        # the hold ends, its peers wait it out. Nothing after it says what a killed worker does,
        # so it is judged into a verdict that is dropped.
        judged = Verdict() if undelivered else v
        if isinstance(driver, JobCaseDriver):
            judge_faulted_job(case, job, bool(fired), p.error_deadline_s, judged)
            peer_line = judge_peer_jobs(case, peer_jobs, judged)
            outputs = answered(peer_jobs)
            if not after.exited:
                peer_line += "; " + judge_listing(await driver.unfinished(jobs), judged)
                await driver.forget(jobs)
            client, expected = job.text(), "job `failed` with a stated error"
        else:
            judge_faulted(case, seen, bool(fired), p.error_deadline_s, judged)
            peer_line = judge_peers(case, peers, judged)
            outputs = answered(peers)
            client, expected = seen.text(), "5xx with error envelope"
        peer_line += "; " + judge_peer_outputs(self.truths, outputs, judged,
                                               f"the {case.stage.value} fault")  # fmt: skip
        policy = self.ctx.restart_policy
        judge_after(policy, after, p.recover_deadline_s, p.exit_deadline_s, judged)
        leak: Growth = {}
        if after.recovered and not undelivered:
            leak = await judge_kept(watch, base, p, v)
        outcome = GateOutcome.FAILED if v.failures else (
            GateOutcome.INVALID if v.invalid else GateOutcome.PASSED)  # fmt: skip
        health = ("recovered in " + f"{after.recovered_in_s:.1f} s" if after.recovered
                  else "exited" if after.exited else "neither") + f" ({after.health})"  # fmt: skip
        actions = [] if kill is None else [kill.line]
        self.failures += [f"{case.id}: {f}" for f in v.failures]
        self.invalid += [f"{case.id}: {i}" for i in v.invalid]
        note = "; ".join(dict.fromkeys([*v.failures, *v.invalid, peer_line, *actions, *v.notes]))
        self.results.append(CaseResult(
            id=case.id, endpoint=self.endpoint.value, sent=case.describe(steps),
            expected_status=f"{expected}; {policy.value}",
            observed_status=f"{client}; {health}", outcome=outcome, note=note[:600]))
        self.summary[case.id] = {
            "injected": case.describe(steps), "stage": case.stage.value, "mode": case.mode.value,
            "step": arm.step, "faulted_seed": arm.request_seed,
            "where": fired[0].where if fired else "",
            "fired_in": fired[0].request_id if fired else "",
            "fired_pids": sorted({r.pid for r in fired}),
            "client": client, "peers": peer_line, "actions": actions,
            "policy": policy.value, "health": health, "recovered": after.recovered,
            "recovered_in_s": after.recovered_in_s, "same_output": after.same_output,
            "exited": after.exited, "orphans": list(after.orphans),
            "restart_required": judged.restart_required, "next_request": after.next_request,
            "leak": leak, "leak_since": base.first_case, "outcome": outcome.value,
            "records": [r.model_dump(mode="json") for r in records],
        }  # fmt: skip
        if after.recovered_in_s is not None:
            self.recovered_s[case.id] = after.recovered_in_s
        return after.exited

    def _keep(self, case: FaultCase, done: Recorded) -> bool:
        """A cancel point's evidence (``cancel_points``); True when the server ended."""
        self.failures += [f"{case.id}: {f}" for f in done.verdict.failures]
        self.invalid += [f"{case.id}: {i}" for i in done.verdict.invalid]
        self.results.append(done.result)
        self.summary[case.id] = done.summary
        if done.recovered_in_s is not None:
            self.recovered_s[case.id] = done.recovered_in_s
        return done.exited

    def _not_run(self, case: FaultCase, steps: int, why: str) -> None:
        """A case the harness cannot carry out on this server: invalid, nothing armed."""
        self.invalid.append(f"{case.id}: {why}")
        self.results.append(CaseResult(
            id=case.id, endpoint=self.endpoint.value, sent=case.describe(steps),
            expected_status="not run", observed_status="not run", outcome=GateOutcome.INVALID,
            note=why[:600]))  # fmt: skip
        self.summary[case.id] = {"injected": case.describe(steps), "outcome": "invalid",
                                 "not_run": why}  # fmt: skip

    def _outcome(self, records: list[FaultRecord]) -> CheckOutcome:
        put = self.ctx.artifacts.put_artifact
        artifacts = list(self.logs)
        if records:
            lines = "".join(r.model_dump_json() + "\n" for r in records).encode()
            artifacts.append(put(lines, media_type="application/x-ndjson",
                                 role="raw-series", name="fault-records.jsonl"))  # fmt: skip
        doc = {"cases": self.summary, "launches": self.launches, "solo_s": self.solo_s,
               "failures": self.failures, "invalid": self.invalid,
               "readings": self.readings}  # fmt: skip
        artifacts.append(put(json.dumps(doc, indent=1, default=str).encode(),
                             media_type="application/json", role="summary",
                             name="fault-injection-summary.json"))  # fmt: skip
        measurements = [Measurement(name=f"{cid}.recovered_in_s", unit="s", value=round(s, 3))
                        for cid, s in self.recovered_s.items()]  # fmt: skip
        return CheckOutcome(
            verdict(self.failures, invalid=self.invalid), tuple(self.failures + self.invalid),
            tuple(measurements), tuple(artifacts), tuple(self.results),
            requested={"cases": list(self.params.cases), "peers": self.params.peers,
                       "restart_policy": self.ctx.restart_policy.value},
            effective={"fault_injection": self.summary, "launches": self.launches,  # type: ignore[dict-item]
                       "readings": self.readings},  # type: ignore[dict-item]
        )  # fmt: skip

