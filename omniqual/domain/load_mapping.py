"""The checkpoint-to-runtime name mapping a strict-load gate holds a model to
(``gates/load-mappings/*.yaml``).

Per component (a checkpoint subfolder) it states what the serving loader does with each
checkpoint tensor: ordered regex renames, fused destinations with their source shards (mirroring
vLLM-Omni's ``stacked_params_mapping``: ``.to_qkv <- .to_q, .to_k, .to_v``), and explicit ignores
on either side. An ignore's ``reason`` is optional in the schema on purpose: a missing reason is
a gate failure with a precise message, not a spec-loading error that hides the other findings.
"""

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


def _regex(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"not a regular expression: {exc}") from None
    return pattern


class Rename(BaseModel):
    """``re.sub(pattern, replacement, name)``, applied in order to every checkpoint name."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pattern: str
    replacement: str
    note: str = ""

    _valid = field_validator("pattern")(_regex)


class FusedDestination(BaseModel):
    """Checkpoint tensors whose name contains ``<source>.`` load into ``<into>.`` as shard
    ``shard_ids[i]``; the runtime parameter is their concatenation along ``dim``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    into: str = Field(min_length=1, description="Name fragment of the fused parameter: .to_qkv")
    sources: tuple[str, ...] = Field(min_length=2, description="Fragments, in concat order.")
    shard_ids: tuple[str | int, ...]
    dim: int = 0

    @model_validator(mode="after")
    def _aligned(self) -> "FusedDestination":
        if len(self.sources) != len(self.shard_ids):
            raise ValueError(
                f"{self.into}: {len(self.sources)} sources but {len(self.shard_ids)} shard_ids"
            )
        return self


class Reshape(BaseModel):
    """A layout change the loader applies before copying (e.g. Stable Audio's ``[n] -> [n, 1]``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pattern: str
    """Full-match regex over the runtime parameter name."""
    op: Literal["unsqueeze-last"]
    note: str = ""

    _valid = field_validator("pattern")(_regex)


class Ignore(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    side: Literal["checkpoint", "runtime"]
    """``checkpoint``: a tensor the loader deliberately skips; ``runtime``: a parameter that is
    deliberately not loaded from the checkpoint (initialized in code)."""
    pattern: str
    """Full-match regex over the (checkpoint or runtime) tensor name."""
    reason: str | None = None

    _valid = field_validator("pattern")(_regex)


class ComponentMapping(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    loader: str = Field(description="Who loads it: vllm-omni, transformers or diffusers.")
    mirrors: str = Field(default="", description="The upstream code this mapping mirrors.")
    renames: tuple[Rename, ...] = ()
    fused: tuple[FusedDestination, ...] = ()
    reshapes: tuple[Reshape, ...] = ()
    ignores: tuple[Ignore, ...] = ()
    checkpoint_dtypes: tuple[str, ...] = ("F32", "BF16", "F16")
    """Checkpoint dtypes accepted for floating-point runtime parameters (cast on load)."""


class SkippedComponent(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    reason: str | None = None


class LoadMappingSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = 1
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    pipeline_classes: tuple[str, ...] = Field(
        min_length=1, description="model_index.json `_class_name` values this mapping serves."
    )
    vllm_omni_version: str = Field(default="", description="The release the mapping mirrors.")
    components: dict[str, ComponentMapping]
    skip_components: dict[str, SkippedComponent] = Field(
        default_factory=dict, description="Weight-bearing subfolders not checked, with reasons."
    )
