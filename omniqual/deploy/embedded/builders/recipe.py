"""What a tiny-checkpoint builder declares: its recipe (hashed) and how it writes and checks.

``configs`` holds only plain JSON values, so the recipe hash is computed without torch; the
``write`` and ``check`` callables import torch/diffusers/transformers themselves when run.
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omniqual.deploy.embedded.manifest import recipe_hash


@dataclass(frozen=True, slots=True)
class CheckpointBuilder:
    """A deterministic recipe for one diffusers-layout checkpoint."""

    name: str
    version: str
    seed: int
    configs: Mapping[str, Mapping[str, Any]]
    # Writes the checkpoint into an empty directory (seeded, offline).
    write: Callable[[Path, CheckpointBuilder], None]
    # Loads the written checkpoint with the plain diffusers pipeline and runs it briefly;
    # raises on any mistake so a broken checkpoint never reaches the cache.
    check: Callable[[Path], None]

    @property
    def recipe_hash(self) -> str:
        return recipe_hash(self.name, self.version, self.seed, self.configs)

    def fresh_configs(self) -> dict[str, dict[str, Any]]:
        """A deep copy for constructors: transformers mutates nested config dicts it is given,
        which would silently change the recipe (and its hash) of later builds."""
        return copy.deepcopy({k: dict(v) for k, v in self.configs.items()})


def heavy(module: str) -> Any:
    """Import diffusers/transformers lazily, typed as Any (they ship no usable stubs)."""
    return importlib.import_module(module)


def component_seed(builder: CheckpointBuilder, component: str) -> int:
    """A per-component seed so adding a component does not shift the others' weights."""
    offset = sum(ord(c) for c in component)
    return (builder.seed * 1_000_003 + offset) % (2**31)
