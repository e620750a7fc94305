"""The live tests' checkpoint cache kept across runs: what of it may still be reused.

The catalog reuses a built checkpoint while its recipe is unchanged. A cache kept across runs
(``$OMNIQUAL_EMBEDDED_CACHE``, ``.omniqual/cache/embedded`` under ``make test``) also outlives
upgrades of the libraries that wrote it, and the manifest, whose hash is in the provenance perf
baselines are matched on, would still name the old versions: such a checkpoint is dropped at
the start of the session and built again on first use.
"""

from __future__ import annotations

import logging
import shutil
from importlib import metadata
from pathlib import Path

from omniqual.deploy.embedded.manifest import read_manifest

logger = logging.getLogger(__name__)


def installed_version(library: str) -> str:
    try:
        return metadata.version(library)
    except metadata.PackageNotFoundError:
        return "absent"  # as the catalog writes it


def built_with_other_libraries(checkpoint: Path) -> bool:
    """Whether ``checkpoint``'s manifest names library versions other than the installed ones."""
    manifest = read_manifest(checkpoint) if checkpoint.is_dir() else None
    if manifest is None:
        return False  # not a checkpoint, or an unfinished one: the catalog decides
    return any(installed_version(lib) != v for lib, v in manifest.library_versions.items())


def drop_other_library_builds(cache: Path) -> list[str]:
    """Remove the checkpoints of ``cache`` built with other library versions; their names."""
    dropped = []
    for checkpoint in sorted(cache.iterdir()):
        if built_with_other_libraries(checkpoint):
            logger.info("dropping %s: built with other library versions", checkpoint)
            shutil.rmtree(checkpoint)
            dropped.append(checkpoint.name)
    return dropped
