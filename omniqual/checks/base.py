"""What every check kind implements, and the context the engine hands it.

A check kind is code (``api_contract``); a gate is a configured instance of it (``gates/*.yaml``).
A check never starts a deployment or writes files itself: it asks its context, so tests inject
fakes. The system under test failing is data (a ``failed`` outcome with reasons), not an exception;
an exception escaping ``run`` becomes an ``errored`` result.
"""

from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal, Protocol

from pydantic import BaseModel, ConfigDict, JsonValue

from omniqual.deploy.agent.client import AgentAccess
from omniqual.deploy.launcher import StartupOutcome
from omniqual.domain.axes import RowKey
from omniqual.domain.evidence import Artifact, CaseResult, Measurement
from omniqual.domain.gate import GateSpec
from omniqual.domain.matrix import RestartPolicy
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.provenance import Provenance
from omniqual.domain.recipe import LaunchRecipe

if TYPE_CHECKING:
    from omniqual.client.client import OmniClient


class CheckParams(BaseModel):
    """Base for each check kind's ``params`` block: unknown keys are spec errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class ArtifactSink(Protocol):
    def put_artifact(
        self, data: bytes | Path, *, media_type: str, role: str, name: str
    ) -> Artifact: ...


@dataclass(slots=True)
class KeptSink:
    """A sink remembering what was stored through it: the artifacts a check's outcome lists
    (a passing result without them is not evidence)."""

    sink: ArtifactSink
    stored: dict[str, Artifact] = field(default_factory=dict)

    def put_artifact(
        self, data: bytes | Path, *, media_type: str, role: str, name: str
    ) -> Artifact:
        artifact = self.sink.put_artifact(data, media_type=media_type, role=role, name=name)
        self.stored.setdefault(f"{artifact.sha256}:{role}", artifact)
        return artifact


@dataclass(frozen=True, slots=True)
class TargetInfo:
    """The deployment a gate runs against."""

    url: str | None
    """Base URL of the served API; None for gates that need no server (strict-load)."""
    recipe: LaunchRecipe | None = None
    pid: int | None = None
    """Server process id, when known (launched by omniqual or given): enables the observer."""
    checkpoint_dir: Path | None = None
    api_key: str | None = None
    log_path: Path | None = None
    temp_dirs: tuple[Path, ...] = ()
    """Directories the server writes temporary files to (its TMPDIR when omniqual launched it):
    residue there after a request is a leak."""
    label: str = ""
    agent: AgentAccess | None = None
    """An ``omniqual agent`` beside a server on another host (``--agent``): its process tree is
    read through it as ``pid`` reads a local one (see :mod:`omniqual.checks.observed`)."""


Progress = Callable[[str, float | None], None]
"""(message, fraction done or None): the engine turns these into progress bars."""


@dataclass(frozen=True, slots=True)
class CheckContext:
    gate: GateSpec
    row: RowKey
    target: TargetInfo
    artifacts: ArtifactSink
    project_root: Path
    make_client: Callable[[], "OmniClient"]
    """A fresh client for the target (the caller closes it; ``async with``)."""
    launch_expecting_failure: Callable[[LaunchRecipe], Awaitable["LaunchAttempt"]] | None = None
    serve_reference: Callable[[RowKey], AbstractAsyncContextManager["ServedReference"]] | None = (
        None
    )
    """The deployment of another matrix row (a parity gate's baseline), served for the block;
    None where the engine cannot serve one (the check is then invalid, never passed)."""
    serve_point: Callable[[LaunchRecipe], AbstractAsyncContextManager["PointLaunch"]] | None = None
    """A recipe the check derived (an offload sweep point) launched with the target's launcher
    for the block and stopped after it; a refusal or a startup hang is yielded, not raised."""
    progress: Progress = field(default=lambda message, fraction: None)
    seed: int = 0
    provenance: Provenance | None = None
    """What the target is, as its results record it (checkpoint sha256, revisions): a value a
    URL deployment did not report reads ``unknown``; None where the engine gives none."""
    restart_policy: RestartPolicy = RestartPolicy.RECOVERS
    """The row's declared restart policy after a fault (matrix row ``restart_policy``)."""


@dataclass(frozen=True, slots=True)
class LaunchAttempt:
    """A startup attempt of a recipe, with its server log stored as an artifact."""

    startup: StartupOutcome
    log_artifact: Artifact | None


@dataclass(frozen=True, slots=True)
class PointLaunch:
    """One launch of a derived recipe: how startup went and, when it became ready, the target
    (up until the block ends)."""

    startup: StartupOutcome
    target: TargetInfo | None
    """None when the point refused to start or hung past its readiness deadline."""
    log_artifact: Artifact | None
    make_client: Callable[[], "OmniClient"] | None = None
    """A fresh client for the served point (None when it did not serve)."""
    configs: tuple[Artifact, ...] = ()
    """The config files the point's argv names (role ``deploy-config``), as stored."""


@dataclass(frozen=True, slots=True)
class ServedReference:
    """A reference deployment served for a check: the baseline row, its recipe and what it is."""

    row: RowKey
    recipe_id: str
    target: TargetInfo
    make_client: Callable[[], "OmniClient"]
    provenance: Mapping[str, JsonValue] = field(default_factory=dict)
    """What answered (serve argv, revisions), recorded with the check's result."""
    make_again_client: Callable[[], "OmniClient"] | None = None
    """A second launch of the same recipe, for the reference's spread against itself (None: a
    deployment given by URL, which answers the second time itself)."""


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    outcome: GateOutcome
    reasons: tuple[str, ...] = ()
    measurements: tuple[Measurement, ...] = ()
    artifacts: tuple[Artifact, ...] = ()
    cases: tuple[CaseResult, ...] = ()
    requested: Mapping[str, JsonValue] = field(default_factory=dict)
    effective: Mapping[str, JsonValue] = field(default_factory=dict)
    startup_only: bool = False
    limitations: tuple[str, ...] = ()
    """Declared deviations that reproduced: the gate may pass, the row is at best limited."""


class Check(Protocol):
    """A check kind. ``params_model`` validates the gate spec's ``params`` block; ``needs``
    says what the engine must provide: a served target (``server``), only the checkpoint
    (``checkpoint``), or launch attempts of a recipe (``launches``).

    A kind whose findings are timings or memory figures (soak, abort, offload-sweep, fails-fast)
    also sets ``measures: ClassVar[bool] = True``: a campaign run with ``--jobs`` then runs it
    with nothing of another launch group running beside it. Kinds without it measure nothing
    the host's load could move (see :func:`omniqual.checks.registry.measures`).

    A measuring kind that launches servers of its own (``serve_point``, ``serve_reference``)
    may also set ``shares_start_ups: ClassVar[bool] = True``: each of those start-ups then runs
    beside the other groups' work, and the gate takes the host back, waiting for it as any
    measurement does, before ``serve_point`` yields the ready server. Only a kind that judges
    and reports nothing of a start-up itself may: its wall-clock time to ready, the memory it
    took while starting, or a refusal timed against a deadline are all moved by a busy host.
    Default False (see :func:`omniqual.checks.registry.shares_start_ups`)."""

    kind: ClassVar[str]
    params_model: ClassVar[type[CheckParams]]
    needs: ClassVar[Literal["server", "checkpoint", "launches"]]

    async def run(self, ctx: CheckContext, params: CheckParams) -> CheckOutcome: ...


def verdict(failures: list[str], *, invalid: list[str] | None = None) -> GateOutcome:
    """Failures beat invalidity; with neither, the gate passed."""
    if failures:
        return GateOutcome.FAILED
    if invalid:
        return GateOutcome.INVALID
    return GateOutcome.PASSED
