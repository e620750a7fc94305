"""The fault-injection gate's ``params`` block: the request a fault lands in, the cases to run,
the plain peer requests sent beside it (and the tolerance their outputs are held to against
their solo same-seed outputs where the exact rule cannot apply), the deadlines each judgement is
held to, how long a cancel point holds its request, the cleanup bounds, and (for a deployment
given by URL) where its injector's control and record files are."""

from pydantic import Field, field_validator, model_validator

from omniqual.checks.abort.peer_truth import peer_tolerance
from omniqual.checks.base import CheckParams
from omniqual.checks.fault_injection.cases import CASES
from omniqual.checks.soak.params import ShapeSpec
from omniqual.compare import ParityTolerance


class FaultInjectionParams(CheckParams):
    shape: ShapeSpec = Field(
        default_factory=lambda: ShapeSpec(name="fault", width=64, height=64, num_frames=9, steps=8)
    )
    cases: tuple[str, ...] = Field(default=tuple(CASES), min_length=1)
    peers: int = Field(default=2, ge=0, description="Plain requests sent beside the faulted one.")
    tolerance: ParityTolerance = Field(
        default_factory=peer_tolerance,
        description="A peer's output against its solo same-seed output where the exact rule "
        "cannot apply (a batching row, or a peer that does not reproduce itself exactly alone).",
    )
    peer_delay_s: float = Field(
        default=0.15, ge=0, description="Sent this long after the faulted one (it goes first)."
    )
    request_timeout_s: float = Field(default=60.0, gt=0, description="Client deadline (peers).")
    error_deadline_s: float = Field(
        default=30.0, gt=0, description="The faulted request's terminal error arrives within it."
    )
    hang_s: float = Field(default=10.0, gt=0, description="How long a denoise hang lasts.")
    hang_client_timeout_s: float = Field(
        default=4.0, gt=0, description="The hung request's client deadline (below hang_s)."
    )
    kill_hold_s: float = Field(
        default=30.0, gt=0, description="The worker is held here until it is SIGKILLed."
    )
    late_s: float = Field(
        default=2.0, gt=0, description="After the result, the late fault waits this long."
    )
    hold_s: float = Field(
        default=3.0, gt=0, description="A cancel point holds its request this long (the cancel "
        "lands within it).",
    )  # fmt: skip
    queue_s: float = Field(
        default=0.3, gt=0, description="The queued request waits this long behind the held "
        "peer before its cancel.",
    )  # fmt: skip
    health_timeout_s: float = Field(default=5.0, gt=0)
    recover_deadline_s: float = Field(
        default=45.0, gt=0, description="/health 200 and the known-good request succeed within."
    )
    exit_deadline_s: float = Field(
        default=30.0, gt=0, description="An exiting server's whole process tree is gone within."
    )
    settle_max_s: float = Field(default=10.0, ge=0)
    max_memory_growth_mib: float = Field(default=64.0, ge=0)
    max_fd_growth: int = Field(default=8, ge=0)
    max_temp_file_growth: int = Field(default=0, ge=0)
    watch_dirs: tuple[str, ...] = ()
    control_path: str | None = Field(
        default=None, description="A URL deployment: its OMNIQUAL_FAULT_CONTROL path."
    )
    record_path: str | None = Field(
        default=None, description="A URL deployment: its OMNIQUAL_FAULT_RECORD path."
    )

    @field_validator("cases")
    @classmethod
    def _known(cls, cases: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [c for c in cases if c not in CASES]
        if unknown:
            raise ValueError(f"unknown case(s) {unknown}; known: {', '.join(CASES)}")
        return cases

    @model_validator(mode="after")
    def _cancel_within_the_hold(self) -> "FaultInjectionParams":
        # The queued request is cancelled while its peer is still held: a wait as long as the
        # hold would cancel it as the worker frees up, and prove nothing about a queued cancel.
        if self.queue_s >= self.hold_s / 2:
            raise ValueError(f"queue_s ({self.queue_s:g}) must be below half of hold_s "
                             f"({self.hold_s:g}): the queued cancel lands while the peer is held")
        return self
