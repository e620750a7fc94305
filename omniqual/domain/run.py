"""Run-level records: the environment fingerprint, the journal's record kinds and its anchor.

Every journal record carries ``prev_sha256``, its link in the journal's hash chain (the chain
itself is :mod:`omniqual.evidence.chain`); records written before chaining have none. The
journal's anchor (:class:`JournalAnchor`, see :mod:`omniqual.evidence.anchor`) records its length
and last line outside it; sessions written before anchoring say so (``anchored`` false).
"""

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from omniqual.domain.evidence import Artifact
from omniqual.domain.result import GateResult

JOURNAL_SCHEMA_VERSION = 1
ANCHOR_SCHEMA_VERSION = 1

_LINK = (
    "sha256 of the journal line before this record (its exact bytes, newline included); 64 "
    "zeros for the first record. None: written before the journal was chained."
)


class GpuInfo(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int
    name: str
    memory_total_bytes: int
    driver: str | None = None


class CpuNumerics(BaseModel):
    """How this CPU computes the dtypes a CPU target serves in: what torch dispatches to, the
    numeric cpuinfo flags, and whether bf16 runs natively or is emulated (measured, not
    inferred: a bf16 matmul timed against fp32). Performance evidence from a host with native
    bf16 is not evidence for one that emulates it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    capability: str | None = Field(
        default=None, description="torch.backends.cpu.get_cpu_capability(), e.g. AVX2, AVX512."
    )
    flags: tuple[str, ...] = Field(
        default=(), description="The numeric cpuinfo flags present (avx2, avx512_bf16, amx_*)."
    )
    bf16: Literal["native", "emulated", "unknown"] = "unknown"
    bf16_slowdown: float | None = Field(
        default=None, description="bf16 / fp32 time of one matmul on one thread (x)."
    )
    caps: dict[str, str] = Field(
        default_factory=dict,
        description="ISA caps in force (ATEN_CPU_CAPABILITY, ONEDNN_MAX_CPU_ISA), by variable.",
    )


class EnvironmentFingerprint(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = 1
    hostname_hash: str = Field(description="sha256 of the hostname; hostnames stay private.")
    os: str
    kernel: str
    machine: str
    cpu_model: str
    cpu_count: int
    cpu_numerics: CpuNumerics | None = None
    memory_total_bytes: int
    gpus: tuple[GpuInfo, ...] = ()
    python: str
    packages: dict[str, str] = Field(default_factory=dict, description="name -> version")
    omniqual_version: str
    git_commit: str | None = None
    git_dirty: bool | None = None
    describes: str = Field(
        default="harness-host",
        description="The host every field above was read on: always the host omniqual ran on.",
    )
    target_hosts: dict[str, str] = Field(
        default_factory=dict,
        description="target (recipe id or URL) -> 'harness-host' when it was launched on this "
        "host, 'not-visible' for a URL deployment (the harness cannot see that host).",
    )


class RunStarted(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = JOURNAL_SCHEMA_VERSION
    kind: Literal["run-started"] = "run-started"
    prev_sha256: str | None = Field(default=None, description=_LINK)
    run_id: str
    at: datetime
    command: tuple[str, ...] = Field(description="argv, secrets redacted.")
    environment: EnvironmentFingerprint
    resumed_from: str | None = None
    anchored: bool = Field(
        default=False,
        description="This session's writer anchors the journal (anchor.json) after every record; "
        "false in sessions written before anchoring.",
    )


class ResultRecorded(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = JOURNAL_SCHEMA_VERSION
    kind: Literal["result"] = "result"
    prev_sha256: str | None = Field(default=None, description=_LINK)
    result: GateResult


class ArtifactStored(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = JOURNAL_SCHEMA_VERSION
    kind: Literal["artifact"] = "artifact"
    prev_sha256: str | None = Field(default=None, description=_LINK)
    artifact: Artifact


class RunFinished(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = JOURNAL_SCHEMA_VERSION
    kind: Literal["run-finished"] = "run-finished"
    prev_sha256: str | None = Field(default=None, description=_LINK)
    run_id: str
    at: datetime
    status: Literal["completed", "interrupted", "failed"]
    results: int


class JournalAnchor(BaseModel):
    """Where the journal ended when its writer last made a record durable: its length in bytes
    and lines, and the sha256 of its last line (the chain head, linked to every line before it).

    A journal only grows, so one shorter than an anchor lost records, and one whose line ending
    at the anchored length hashes otherwise was altered there.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = ANCHOR_SCHEMA_VERSION
    size: int = Field(ge=0, description="Bytes, up to the end of the anchored line.")
    lines: int = Field(ge=0, description="Lines in those bytes (one per record).")
    head_sha256: str = Field(
        pattern=r"^[0-9a-f]{64}$", description="sha256 of the anchored line, newline included."
    )


JournalRecord = Annotated[
    RunStarted | ResultRecorded | ArtifactStored | RunFinished, Field(discriminator="kind")
]


class RunSummary(BaseModel):
    """``run.json``: written atomically when the run ends (the journal is the source of truth)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = JOURNAL_SCHEMA_VERSION
    run_id: str
    started_at: datetime
    finished_at: datetime
    status: Literal["completed", "interrupted", "failed"]
    command: tuple[str, ...]
    environment: EnvironmentFingerprint
    results: tuple[GateResult, ...]
    journal: JournalAnchor | None = Field(
        default=None,
        description="The journal's anchor at the run's end (its run-finished record included); "
        "None in run.json written before anchoring.",
    )
