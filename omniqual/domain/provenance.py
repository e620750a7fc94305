"""Revisions every result is recorded against; evidence at another revision is stale."""

from pydantic import BaseModel, ConfigDict, Field

REVISION_FIELDS: tuple[str, ...] = (
    "model_revision",
    "checkpoint_sha256",
    "vllm_omni_version",
    "vllm_omni_commit",
    "serve_config_sha256",
)
"""Fields that make evidence stale when they differ from the matrix's target revision."""


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
