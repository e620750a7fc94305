"""Session fixtures for the embedded CPU target: a checkpoint cache and lazily built checkpoints.

Set OMNIQUAL_EMBEDDED_CACHE to reuse a cache directory across runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from omniqual.deploy.embedded.catalog import BuiltCheckpoint, build_checkpoint


@pytest.fixture(scope="session")
def checkpoint_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    configured = os.environ.get("OMNIQUAL_EMBEDDED_CACHE")
    return Path(configured) if configured else tmp_path_factory.mktemp("embedded-checkpoints")


@pytest.fixture(scope="session")
def checkpoints(checkpoint_cache: Path) -> Callable[[str], BuiltCheckpoint]:
    """Build (or reuse) a bundled checkpoint by catalog name, once per session."""
    done: dict[str, BuiltCheckpoint] = {}

    def get(name: str) -> BuiltCheckpoint:
        if name not in done:
            done[name] = build_checkpoint(name, checkpoint_cache)
        return done[name]

    return get
