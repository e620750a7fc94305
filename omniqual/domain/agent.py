"""The wire shapes of ``omniqual agent``: what the agent beside a server answers over HTTP.

An agent runs on the server's host and reads what the harness cannot see from elsewhere: the
server's process tree (CPU seconds, memory, descriptors, threads, per-process GPU memory), the
files under its watched directories, and the fault-injection control and record files (see
:mod:`omniqual.domain.fault_injection`). Every answer carries ``schema_version``; a figure the
agent could not read is ``None``, never zero. A watched process that is gone is a state of the
readings (``gone``), not an error.
"""

import ipaddress
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from omniqual.domain.fault_injection import FaultRecord

AGENT_SCHEMA_VERSION = 1
TOKEN_ENV = "OMNIQUAL_AGENT_TOKEN"
"""The bearer token of ``--agent`` when no ``--agent-token-file`` is given."""
AGENT_SOURCE = "agent:process-tree"
"""The resource source a gate records when an agent gave the readings."""
LOCALHOST = "localhost"


def is_loopback(host: str) -> bool:
    """Whether listening on ``host`` keeps the agent on this machine: ``localhost`` or a literal
    loopback address (``127.0.0.0/8``, ``::1``). Any other name is not: what it resolves to is
    outside the agent's control, and ``""``/``0.0.0.0``/``::`` mean every interface."""
    if host.strip().lower() == LOCALHOST:
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TreeState(StrEnum):
    RUNNING = "running"
    GONE = "gone"  # the watched process no longer exists: every figure is empty


class GpuReading(_Wire):
    index: int = Field(ge=0)
    used_bytes: int = Field(ge=0, description="Device-wide, every process on the device.")
    total_bytes: int = Field(ge=0)
    tree_used_bytes: int | None = Field(
        default=None, description="What NVML attributes to the tree's pids; None: unattributable."
    )


class DirCount(_Wire):
    path: str
    files: int | None = Field(description="None: missing or unreadable, never a silent zero.")


class AgentReadings(_Wire):
    """One sample of the watched process tree, as the local observer takes it."""

    schema_version: int = AGENT_SCHEMA_VERSION
    state: TreeState
    pid: int
    at_unix: float = Field(description="The agent host's clock (readers keep their own).")
    processes: int = Field(ge=0)
    rss_bytes: int = Field(ge=0)
    pss_bytes: int | None
    uss_bytes: int | None
    open_fds: int | None
    threads: int = Field(ge=0)
    cpu_s: float | None = Field(description="User + system CPU seconds of the living tree.")
    dir_files: tuple[DirCount, ...] = ()
    gpus: tuple[GpuReading, ...] = ()
    nvml: bool = False


class CpuReading(_Wire):
    """The tree's CPU seconds alone: cheap enough to poll every tenth of a second."""

    schema_version: int = AGENT_SCHEMA_VERSION
    state: TreeState
    cpu_s: float | None


class AgentIdentity(_Wire):
    """Who is watching what. No command line or environment: those may carry secrets."""

    schema_version: int = AGENT_SCHEMA_VERSION
    pid: int
    host: str
    state: TreeState
    process_name: str | None = Field(description="The watched process's name; None when gone.")
    processes: int = Field(ge=0, description="Processes in the tree now.")
    watch_dirs: tuple[str, ...] = ()
    fault_control: bool = Field(description="The agent can arm faults (control file given).")
    omniqual_version: str


class FaultAnswer(_Wire):
    """The control file's state after an arm or disarm."""

    schema_version: int = AGENT_SCHEMA_VERSION
    armed: str | None = Field(description="The arm id now in the control file; None: disarmed.")


class FaultRecords(_Wire):
    """Record lines after the first ``after``; ``next`` is the ``after`` of the next page."""

    schema_version: int = AGENT_SCHEMA_VERSION
    after: int = Field(ge=0)
    next: int = Field(ge=0)
    records: tuple[FaultRecord, ...] = ()
    unreadable: int = Field(default=0, ge=0, description="Complete lines that were no record.")


class AgentProblem(_Wire):
    """The body of every answer that is not 200."""

    schema_version: int = AGENT_SCHEMA_VERSION
    error: str
