"""The contract between the fault-injection harness and the injector that runs inside a served
process tree: how a fault is armed, and how the injector records what it did.

The harness owns a control file (its path in ``OMNIQUAL_FAULT_CONTROL``) holding one
:class:`FaultArm`, or nothing (disarmed). The injector, loaded into every Python process of the
server's tree, reads that file at each hook call (cheaply: only when its mtime changed), fires
at most ``times`` times per arm id across the whole tree, and appends one :class:`FaultRecord`
line per event to the record file (``OMNIQUAL_FAULT_RECORD``, JSON lines). Without both
variables the injector is absent: servers launched for other gates never carry it.

The injector side reads and writes plain JSON with the standard library only (it must import
nothing heavy inside the server); these models are the harness's view of the same shapes.
"""

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

FAULT_SCHEMA_VERSION = 1
CONTROL_ENV = "OMNIQUAL_FAULT_CONTROL"
RECORD_ENV = "OMNIQUAL_FAULT_RECORD"


class FaultStage(StrEnum):
    """Where in a request's life the injector's hooks sit."""

    ENCODE = "encode"  # text/condition encoding
    ENCODED = "encoded"  # encoding done, denoising not begun (the latents' preparation)
    DENOISE = "denoise"  # the k-th denoising step
    DECODE = "decode"  # VAE decode / post-processing
    OUTPUT = "output"  # encoding the output for the response (image/video/audio bytes)
    RESULT = "result"  # the result's return to the engine (after a cancel: a late result)


class FaultMode(StrEnum):
    RAISE = "raise"  # a plain exception
    OOM = "oom"  # the framework's out-of-memory error (torch.OutOfMemoryError)
    HANG = "hang"  # sleep ``hang_s`` inside the stage
    EXIT = "exit"  # os._exit inside the process running the stage
    LATE = "late"  # wait ``hang_s`` then raise: a result/exception after the client cancelled
    HOLD = "hold"  # wait ``hang_s`` at the point, then go on: a request held to be cancelled


class FaultArm(BaseModel):
    """One armed fault. ``arm_id`` is unique per arming: the injector counts firings per id."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = FAULT_SCHEMA_VERSION
    arm_id: str = Field(min_length=1)
    case_id: str = Field(min_length=1)
    stage: FaultStage
    mode: FaultMode
    step: int | None = Field(default=None, ge=0, description="Denoise only: the step index.")
    hang_s: float = Field(default=0.0, ge=0)
    times: int = Field(default=1, ge=1, description="Firings allowed for this arm id.")
    request_seed: int | None = Field(
        default=None,
        description="Only the request sent with this seed fires it, wherever a hook knows the "
        "requests its call serves (a step of a request batch or of step execution).",
    )


class FaultEvent(StrEnum):
    FIRED = "fired"  # about to raise / exit / hang
    HANG_ENDED = "hang-ended"  # a hang's sleep returned (the request was not killed meanwhile)
    LOADED = "loaded"  # the injector was imported into a process (once per pid)


class FaultRecord(BaseModel):
    """One line of the record file, written by the injector."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    schema_version: int = FAULT_SCHEMA_VERSION
    event: FaultEvent
    pid: int
    at_unix: float
    arm_id: str = ""
    case_id: str = ""
    stage: FaultStage | None = None
    mode: FaultMode | None = None
    step: int | None = None
    where: str = ""
    """The hooked function (module:qualname) the event happened in."""
    request_id: str = ""
    """The server's id of the request the fault fired in ("" where the hook knows none)."""
    pid_ns: str = ""
    """The writer's pid namespace (``/proc/self/ns/pid``); "" where unreadable. A pid means
    this process only to a reader in the same namespace."""
