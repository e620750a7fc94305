"""Revisions every result is recorded against; evidence at another revision is stale."""

from pydantic import BaseModel, ConfigDict, Field

REVISION_FIELDS: tuple[str, ...] = (
    "model_revision",
    "checkpoint_sha256",
    "vllm_omni_version",
    "vllm_omni_commit",
    "vllm_version",
    "serve_config_sha256",
)
"""Fields that make evidence stale when they differ from the matrix's target revision."""

UNKNOWN = "unknown"
"""A deployment fact the harness looked for and could not establish (a URL server that does not
report its vLLM-Omni version, a checkpoint on another host). It is a value, not a wildcard: it
never equals a known revision, so evidence at an unknown revision never combines with evidence at
a known one. ``None`` is only ever a record written before a field existed."""

HARNESS_HOST = "harness-host"
"""A target launched on the host omniqual runs on: the run's fingerprint describes it."""
NOT_VISIBLE = "not-visible"
"""A target given by URL: the harness cannot see the host it runs on."""


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

    def differing_revisions(self, target: "Provenance") -> list[str]:
        """Revision fields the target pins (non-empty) that this record disagrees with."""
        found = []
        for name in REVISION_FIELDS:
            wanted = getattr(target, name)
            if wanted is not None and getattr(self, name) != wanted:
                found.append(name)
        return found
