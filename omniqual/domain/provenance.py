"""Revisions every result is recorded against; evidence at another revision is stale."""

from pydantic import BaseModel, ConfigDict, Field

REVISION_FIELDS: tuple[str, ...] = (
    "model_revision",
    "checkpoint_sha256",
    "vllm_omni_version",
    "vllm_omni_commit",
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
