"""What the abort gate measured, as a record a report can draw: work after each cut against its
allowance and against the idle CPU baseline, and the server's resources before the cases and
after the settle (memory, open FDs, temp files, GPU memory) against their bounds.

Kept in the result's ``effective["abort_cleanup"]``; the raw windows are also in
``abort-summary.json``. Figures a signal could not give stay ``None`` (absent, never zero).
"""

from pydantic import BaseModel, ConfigDict, Field

ABORT_CLEANUP_SCHEMA_VERSION = 1

_FROZEN = ConfigDict(extra="ignore", frozen=True)


class CutWork(BaseModel):
    """One judged cut: the server watched for ``window_s`` after it."""

    model_config = _FROZEN

    case: str
    queued: bool = False
    window_s: float | None = None
    cpu_s: float | None = None
    """Process-tree CPU seconds over the window."""
    busy_s: float | None = None
    """Until when /metrics still showed a request running or waiting."""
    extra_executions: float | None = None
    ran_on_s: float | None = None
    """Seconds of service the server spent after the cut (the gate's estimate)."""
    allowed_s: float | None = None

    @property
    def cpu_rate(self) -> float | None:
        """CPU seconds per second over the window (1.0 = one core busy)."""
        if self.cpu_s is None or not self.window_s:
            return None
        return self.cpu_s / self.window_s


class JobCleanup(BaseModel):
    """One cancelled async job, checked after it had time to finish anyway."""

    model_config = _FROZEN

    case: str
    delete_status: int | None = None
    after: str = Field(description="What GET /v1/videos/{id} showed: gone (404) or a status.")
    content_status: int | None = None
    terminal_states: list[str] = []
    still_listed: bool = False
    """Still listed as queued or in progress by GET /v1/videos."""


class ResourceFigures(BaseModel):
    model_config = _FROZEN

    memory_bytes: int | None = None
    open_fds: int | None = None
    temp_files: int | None = None
    gpu_tree_bytes: int | None = None


class CleanupBounds(BaseModel):
    model_config = _FROZEN

    memory_growth_mib: float | None = None
    fd_growth: int | None = None
    temp_file_growth: int | None = None
    gpu_memory_growth_mib: float | None = None


class AbortCleanup(BaseModel):
    model_config = _FROZEN

    schema_version: int = ABORT_CLEANUP_SCHEMA_VERSION
    boundary: str | None = None
    signals: list[str] = []
    solo_s: float | None = None
    idle_cpu_rate: float | None = None
    busy_cpu_rate: float | None = None
    cuts: list[CutWork] = []
    jobs: list[JobCleanup] = []
    resource_source: str | None = None
    baseline: ResourceFigures = ResourceFigures()
    after: ResourceFigures = ResourceFigures()
    settle_s: float | None = None
    """How long the settle poll took until the resources were back (or the time ran out)."""
    settle_max_s: float | None = None
    bounds: CleanupBounds = CleanupBounds()
