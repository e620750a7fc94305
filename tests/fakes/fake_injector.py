"""The fake server's stand-in for omniqual's in-server fault injector.

With ``FakeConfig.injector`` set, the fake behaves as a server launched with the injector: it
records LOADED, and the first generation request after an arming (claimed through the real
injector's exclusive firing, so the record file is the one the harness reads) is the faulted
one: it fails as vLLM-Omni answers an exception in its pipeline (500 with an error envelope;
an async video job is accepted and then ends ``failed`` with the error), unless a scripted
``FakeFaults`` misbehaviour says otherwise. The fake has no stages: any armed
stage fires on the next request. A hang holds the request for ``hang_s``; a hold (a cancel
point) holds it as long and then serves it as usual. A cancelled request the fake computes
anyway (``runs_cancelled_queued``) reaches a hooked point too: an armed fault fires there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx

from omniqual.deploy.fault_injector.core import Injector

if TYPE_CHECKING:
    from tests.fakes.fake_core import FakeCore, Reply

WHERE = "fake:generation"


class FakeInjector:
    def __init__(self, core: FakeCore) -> None:
        injection = core.config.injector
        assert injection is not None
        self.core = core
        self.injector = Injector(injection.control, injection.record, sleep=lambda _s: None,
                                 exit=lambda _code: None)  # fmt: skip
        self.injector.loaded()
        self.failing_until = 0.0
        self.wrong_until = 0.0  # peers_answer_wrong: requests arriving until then answer wrong

    def before(self, route: str, request: httpx.Request) -> Reply | None:
        """The faulted request's answer, or None to serve the request as usual."""
        from tests.fakes.fake_core import Reply
        from tests.fakes.fake_video_routes import faulted_job

        core, faults = self.core, self.core.config.faults
        if core.clock() < self.failing_until:  # fault_fails_peers: the fault takes all down
            return Reply(core.error(500, "engine failed: another request's fault"), route,
                         core.config.image_work_s)  # fmt: skip
        arm = self.injector.reader.current()
        hooked = None if core.config.injector is None else core.config.injector.stages
        if arm is not None and hooked is not None and arm.stage not in hooked:
            arm = None  # a stage this release has no hook for: never reached
        if arm is None or not self.injector.claim(arm):
            return self._wrong(route, request) if core.clock() < self.wrong_until else None
        self.injector.write("fired", WHERE, arm, arm.step)
        with core.lock:
            core.state.faults_fired += 1
            if faults.hangs_after_fault:
                core.state.health_hangs = True
        if faults.peers_answer_wrong:  # while the faulted request is in flight
            run_s = core.config.image_work_s if route != "POST /v1/videos" else (
                core.config.video_queue_s + core.config.video_run_s)  # fmt: skip
            self.wrong_until = core.clock() + arm.hang_s + run_s
        if arm.mode == "hold":
            return self._held(route, request, arm.hang_s)
        if faults.leaks_state_after_fault:
            faults.seed_offset += 1
        if route == "POST /v1/videos":  # an async job: accepted, then it fails
            return faulted_job(core, request, arm.case_id, arm.mode, arm.hang_s)
        if arm.mode == "hang":
            self.injector.write("hang-ended", WHERE, arm, arm.step)
            return Reply(core.error(504, "timed out"), route, arm.hang_s)
        if faults.fault_answered_ok:
            return None
        if faults.fault_fails_peers:
            self.failing_until = core.clock() + 4 * max(core.config.image_work_s, 0.05)
        return Reply(core.error(500, f"omniqual injected fault: {arm.case_id}"), route,
                     core.config.image_work_s)  # fmt: skip

    def _served(self, route: str, request: httpx.Request) -> Reply:
        """The request served by its route, as without the injector."""
        from tests.fakes.fake_omni import _POSTS

        return _POSTS[route.split(" ", 1)[1]](self.core, request)

    def _held(self, route: str, request: httpx.Request, hold_s: float) -> Reply:
        """A hold: the request waits ``hold_s`` (a job: in progress), then is served as usual."""
        from tests.fakes.fake_core import Reply

        reply = self._served(route, request)
        if route != "POST /v1/videos":
            return Reply(reply.response, reply.route, reply.work_s + hold_s)
        job = self.core.state.jobs[reply.response.json()["id"]]
        job.held_until = self.core.clock() + hold_s
        return reply

    def _wrong(self, route: str, request: httpx.Request) -> Reply:
        """peers_answer_wrong: served as usual, but not with the request's own output."""
        from tests.fakes.fake_core import Reply, wrong_output

        reply = self._served(route, request)
        if route == "POST /v1/videos":
            job = self.core.state.jobs[reply.response.json()["id"]]
            job.identity = (*job.identity, "beside a fault")
            return reply
        return Reply(wrong_output(reply.response), reply.route, reply.work_s)

    def ran(self) -> None:
        """A cancelled request computes anyway: it passes the hooked points, where an armed
        fault fires (the injector's record says the request ran)."""
        arm = self.injector.reader.current()
        if arm is not None and self.injector.claim(arm):
            self.injector.write("fired", WHERE, arm, arm.step)
