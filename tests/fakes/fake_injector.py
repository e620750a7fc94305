"""The fake server's stand-in for omniqual's in-server fault injector.

With ``FakeConfig.injector`` set, the fake behaves as a server launched with the injector: it
records LOADED, and the first generation request after an arming (claimed through the real
injector's exclusive firing, so the record file is the one the harness reads) is the faulted
one: it fails as vLLM-Omni answers an exception in its pipeline (500 with an error envelope;
an async video job is accepted and then ends ``failed`` with the error), unless a scripted
``FakeFaults`` misbehaviour says otherwise. The fake has no stages: any armed
stage fires on the next request. A hang holds the request for ``hang_s``.
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

    def before(self, route: str, request: httpx.Request) -> Reply | None:
        """The faulted request's answer, or None to serve the request as usual."""
        from tests.fakes.fake_core import Reply
        from tests.fakes.fake_video_routes import faulted_job

        core, faults = self.core, self.core.config.faults
        if core.clock() < self.failing_until:  # fault_fails_peers: the fault takes all down
            return Reply(core.error(500, "engine failed: another request's fault"), route,
                         core.config.image_work_s)  # fmt: skip
        arm = self.injector.reader.current()
        if arm is None or not self.injector.claim(arm):
            return None
        self.injector.write("fired", WHERE, arm, arm.step)
        with core.lock:
            core.state.faults_fired += 1
            if faults.hangs_after_fault:
                core.state.health_hangs = True
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
