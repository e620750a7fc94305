"""Target state files under ``$OMNIQUAL_HOME/targets/<name>.json``.

They let ``target status`` and ``target down`` find a server another omniqual invocation
started. A state records the process creation time so a recycled pid is never signalled, and
for non-persistent launches the owning omniqual process, so a server whose owner was killed
outright is recognised as an orphan (:func:`omniqual.deploy.reaper.reap_orphans`).
"""

import os
from datetime import datetime
from pathlib import Path

import psutil
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from omniqual.deploy.process_tree import same_process

HOME_ENV = "OMNIQUAL_HOME"
_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"


def omniqual_home() -> Path:
    """``$OMNIQUAL_HOME``, default ``~/.cache/omniqual``."""
    configured = os.environ.get(HOME_ENV)
    return Path(configured) if configured else Path.home() / ".cache" / "omniqual"


def targets_dir() -> Path:
    return omniqual_home() / "targets"


class TargetState(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = 1
    name: str = Field(pattern=_NAME)
    recipe_id: str
    pid: int
    pgid: int
    create_time: float = Field(description="psutil create_time of the pid, against pid reuse.")
    host: str
    port: int
    url: str
    log_path: str
    command: tuple[str, ...]
    started_at: datetime
    grace_s: float = Field(default=15.0, ge=0)
    time_to_ready_s: float | None = None
    startup_rss_bytes: int | None = None
    owner_pid: int | None = Field(
        default=None, description="The omniqual process whose run this server belongs to;"
        " None for persistent targets (`target up`), which outlive it on purpose.",
    )  # fmt: skip
    owner_create_time: float | None = None

    def alive(self) -> bool:
        """The recorded process still exists (and is the same process, not a reused pid)."""
        return same_process(self.pid, self.create_time)

    def orphaned(self) -> bool:
        """A non-persistent server whose owner process is gone (killed outright)."""
        if self.owner_pid is None or self.owner_create_time is None:
            return False
        return not same_process(self.owner_pid, self.owner_create_time)


def owner_identity() -> tuple[int, float]:
    """(pid, create time) of this process, recorded as the owner of what it launches."""
    return os.getpid(), psutil.Process().create_time()


def state_path(name: str, directory: Path | None = None) -> Path:
    return (directory or targets_dir()) / f"{name}.json"


def write_state(state: TargetState, directory: Path | None = None) -> Path:
    path = state_path(state.name, directory)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(state.model_dump_json(indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def read_state(name: str, directory: Path | None = None) -> TargetState | None:
    """The state of ``name``; None when there is none or the file is unreadable."""
    path = state_path(name, directory)
    try:
        return TargetState.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError, ValueError):
        return None


def list_states(directory: Path | None = None) -> list[TargetState]:
    root = directory or targets_dir()
    if not root.is_dir():
        return []
    found = (read_state(p.stem, root) for p in sorted(root.glob("*.json")))
    return [state for state in found if state is not None]


def remove_state(name: str, directory: Path | None = None) -> None:
    state_path(name, directory).unlink(missing_ok=True)
