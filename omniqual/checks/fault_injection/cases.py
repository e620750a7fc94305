"""The fault-injection cases: what is injected, where, and how the harness drives it.

Each case arms one fault (``FaultArm``) and sends one request into it with plain peers beside
it. ``step`` picks the denoise step from the request's steps: ``early`` (1), ``middle`` and
``late`` (the last but one). Two cases do more than arm: ``worker-sigkill`` holds the worker in
a denoise step and kills it from outside (the pid is the injector's own record), and
``late-after-cancel`` disconnects the client while the worker waits after its result, before
the fault is raised.

The cancel points (``hold_cancel``) inject no fault: a hold keeps one request at a point of its
life while its client cancels it (``cancel_points``): queued behind a peer held in the worker
(``queued``: before the engine admits it), after encoding, before decoding, and while the API
server encodes its output.
"""

from dataclasses import dataclass
from typing import Literal

from omniqual.domain.fault_injection import FaultMode, FaultStage

StepAt = Literal["early", "middle", "late"]


@dataclass(frozen=True, slots=True)
class FaultCase:
    id: str
    stage: FaultStage
    mode: FaultMode
    step: StepAt | None = None
    sigkill: bool = False  # the harness kills the worker that holds the fault
    cancel: bool = False  # the client disconnects before the (late) fault
    hold_cancel: bool = False  # a cancel point: the request is held there and cancelled
    queued: bool = False  # the hold is on a peer; the request waits queued behind it

    def step_index(self, steps: int) -> int | None:
        if self.step is None:
            return None
        last = max(0, steps - 1)
        return {"early": min(1, last), "middle": steps // 2, "late": max(0, last - 1)}[self.step]

    @property
    def ends_worker(self) -> bool:
        return self.sigkill or self.mode is FaultMode.EXIT

    @property
    def point(self) -> str:
        """A cancel point's place in the request's life."""
        if self.queued:
            return "while queued behind a peer held in the worker (before admission)"
        return {FaultStage.ENCODED: "after encoding (before the first denoise step)",
                FaultStage.DECODE: "before decoding",
                FaultStage.OUTPUT: "while the output is encoded for the response",
                }.get(self.stage, f"at {self.stage.value}")  # fmt: skip

    def describe(self, steps: int) -> str:
        if self.hold_cancel:
            return f"client cancel {self.point}"
        where = self.stage.value
        index = self.step_index(steps)
        if index is not None:
            where += f" step {index}"
        what = "SIGKILL of the worker" if self.sigkill else self.mode.value
        return f"{what} in {where}" + (" after a client cancel" if self.cancel else "")


_ALL = (
    FaultCase("encode-raise", FaultStage.ENCODE, FaultMode.RAISE),
    FaultCase("denoise-early-raise", FaultStage.DENOISE, FaultMode.RAISE, "early"),
    FaultCase("denoise-late-raise", FaultStage.DENOISE, FaultMode.RAISE, "late"),
    FaultCase("denoise-oom", FaultStage.DENOISE, FaultMode.OOM, "middle"),
    FaultCase("decode-raise", FaultStage.DECODE, FaultMode.RAISE),
    FaultCase("output-raise", FaultStage.OUTPUT, FaultMode.RAISE),
    FaultCase("late-after-cancel", FaultStage.RESULT, FaultMode.LATE, cancel=True),
    FaultCase("cancel-before-admission", FaultStage.DENOISE, FaultMode.HOLD, hold_cancel=True,
              queued=True),
    FaultCase("cancel-after-encode", FaultStage.ENCODED, FaultMode.HOLD, hold_cancel=True),
    FaultCase("cancel-before-decode", FaultStage.DECODE, FaultMode.HOLD, hold_cancel=True),
    FaultCase("cancel-during-output", FaultStage.OUTPUT, FaultMode.HOLD, hold_cancel=True),
    FaultCase("denoise-hang", FaultStage.DENOISE, FaultMode.HANG, "middle"),
    FaultCase("worker-exit", FaultStage.DENOISE, FaultMode.EXIT, "middle"),
    FaultCase("worker-sigkill", FaultStage.DENOISE, FaultMode.HANG, "middle", sigkill=True),
)
CASES: dict[str, FaultCase] = {case.id: case for case in _ALL}
"""In the order they run by default: the ones that may end the server last."""
