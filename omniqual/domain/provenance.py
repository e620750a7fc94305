"""Revisions every result is recorded against; evidence at another revision is stale."""

import hashlib
import json
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

REVISION_FIELDS: tuple[str, ...] = (
    "model_revision",
    "checkpoint_sha256",
    "vllm_omni_version",
    "vllm_omni_commit",
    "vllm_version",
    "serve_config_sha256",
    "served_identity_sha256",
)
"""Fields that make evidence stale when they differ from the matrix's target revision."""

IDENTITY_FIELDS: tuple[str, ...] = (
    "checkpoint_sha256",
    "serve_config_sha256",
    "served_identity_sha256",
)
"""What names the deployment a result measured: the checkpoint and serve configuration of a
launch, or what a deployment given by URL showed of itself. A result recording none of them (a
URL result of an older omniqual) is of a deployment nobody can tell from another, so it
combines with no other result: unknown never equals unknown."""

UNKNOWN = "unknown"
"""A deployment fact the harness looked for and could not establish (a URL server that does not
report its vLLM-Omni version, a checkpoint on another host). It is a value, not a wildcard: it
never equals a known revision, so evidence at an unknown revision never combines with evidence at
a known one. ``None`` is only ever a record written before a field existed."""

HARNESS_HOST = "harness-host"
"""A target launched on the host omniqual runs on: the run's fingerprint describes it."""
NOT_VISIBLE = "not-visible"
"""A target given by URL: the harness cannot see the host it runs on."""
AGENT_HOST_PREFIX = "agent:"
"""A target given by URL whose process tree an ``omniqual agent`` on its host reads for the
harness: ``agent:<that host's name>`` (the fingerprint still describes the harness host only)."""


class ServedModel(BaseModel):
    """One card of ``GET /v1/models``, without its ``created`` (the time of the request)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    root: str | None = None
    parent: str | None = None
    max_model_len: int | None = None


class ServedDeployment(BaseModel):
    """What a deployment given by URL showed of itself, asked without creating work: everything
    that tells one running server from another. Results combine only where it agrees."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str
    models: tuple[ServedModel, ...] = Field(min_length=1)
    version: dict[str, str] = Field(
        default_factory=dict, description="``GET /version`` as answered ({}: no answer)."
    )
    openapi_sha256: str | None = Field(
        default=None, description="sha256 of the ``GET /openapi.json`` body (None: no answer)."
    )
    started_at: datetime | None = Field(
        default=None,
        description="The server process's start (``process_start_time_seconds`` on /metrics; "
        "None where not exposed): a restart is another deployment.",
    )

    def sha256(self) -> str:
        """The identity as one value: sha256 of this record's canonical JSON."""
        text = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Provenance(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str | None = None
    model_revision: str | None = Field(default=None, description="Upstream model revision.")
    checkpoint_sha256: str | None = Field(
        default=None, description="Hash over the checkpoint's manifest (every file's sha256)."
    )
    vllm_omni_version: str | None = None
    vllm_omni_commit: str | None = None
    serve_config_sha256: str | None = Field(
        default=None,
        description="Hash of the normalized serve configuration (aliases resolved, defaults "
        "dropped, values canonical): a changed flag never inherits old evidence.",
    )
    serve_argv: tuple[str, ...] = Field(
        default=(), description="The serve command exactly as launched (secrets redacted)."
    )
    source: str | None = Field(
        default=None,
        description="Where the deployment facts came from: 'launched' (the environment that "
        "ran the server) or 'reported' (what a URL deployment answered), else unknown.",
    )
    vllm_version: str | None = Field(
        default=None,
        description="The vLLM release under vLLM-Omni (a URL server's GET /version reports "
        "this one, not vLLM-Omni's).",
    )
    target_host: str | None = Field(
        default=None,
        description="Where the deployment ran: 'harness-host' (launched here; the run's "
        "environment fingerprint describes it) or 'not-visible' (a URL; the harness cannot "
        "see that host).",
    )
    omniqual_version: str | None = None
    omniqual_commit: str | None = None
    served: ServedDeployment | None = Field(
        default=None,
        description="What a deployment given by URL showed of itself (None: launched, or a "
        "record written before it was kept).",
    )
    served_identity_sha256: str | None = Field(
        default=None, description="``served.sha256()``: the served identity as a revision."
    )

    def differing_revisions(self, target: "Provenance") -> list[str]:
        """Revision fields the target pins (non-empty) that this record disagrees with."""
        found = []
        for name in REVISION_FIELDS:
            wanted = getattr(target, name)
            if wanted is not None and getattr(self, name) != wanted:
                found.append(name)
        return found
