"""The manifest every bundled tiny checkpoint carries, and the recipe hash that names its cache dir.

A recipe is the builder's name, version, seed and the component configs it instantiates; its
sha256 over canonical JSON decides whether a cached checkpoint is still current. The manifest
(``omniqual-manifest.json``) records that recipe plus every file's relative path, sha256 and
size, so a checkpoint can be verified byte for byte later.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

MANIFEST_NAME = "omniqual-manifest.json"
MANIFEST_SCHEMA_VERSION = 1


class ManifestFile(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    sha256: str
    size: int


class CheckpointManifest(BaseModel):
    model_config = ConfigDict(frozen=True)

    schema_version: int = MANIFEST_SCHEMA_VERSION
    name: str
    builder_version: str
    seed: int
    recipe_hash: str
    configs: dict[str, dict[str, Any]]
    library_versions: dict[str, str]
    files: list[ManifestFile]


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def recipe_hash(
    name: str, builder_version: str, seed: int, configs: Mapping[str, Mapping[str, Any]]
) -> str:
    """sha256 over the canonical JSON of everything that determines the checkpoint's bytes."""
    payload = {"name": name, "builder_version": builder_version, "seed": seed, "configs": configs}
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def inventory(root: Path) -> list[ManifestFile]:
    """Every regular file under ``root`` except the manifest, sorted by relative path."""
    files = sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and p.relative_to(root).as_posix() != MANIFEST_NAME
    )
    return [
        ManifestFile(
            path=p.relative_to(root).as_posix(), sha256=file_sha256(p), size=p.stat().st_size
        )
        for p in files
    ]


def read_manifest(checkpoint_dir: Path) -> CheckpointManifest | None:
    path = checkpoint_dir / MANIFEST_NAME
    if not path.is_file():
        return None
    try:
        return CheckpointManifest.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError:
        return None


def write_manifest(checkpoint_dir: Path, manifest: CheckpointManifest) -> Path:
    path = checkpoint_dir / MANIFEST_NAME
    path.write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return path


def verify_files(checkpoint_dir: Path, manifest: CheckpointManifest) -> list[str]:
    """Differences between the manifest and the files on disk (empty when they agree)."""
    expected = {f.path: f for f in manifest.files}
    actual = {f.path: f for f in inventory(checkpoint_dir)}
    problems = [f"missing: {p}" for p in sorted(expected.keys() - actual.keys())]
    problems += [f"unexpected: {p}" for p in sorted(actual.keys() - expected.keys())]
    problems += [
        f"changed: {p}" for p in sorted(expected.keys() & actual.keys()) if expected[p] != actual[p]
    ]
    return problems
