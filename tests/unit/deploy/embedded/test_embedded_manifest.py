"""Manifest inventory and verification catch every added, removed or changed file."""

from __future__ import annotations

import hashlib
from pathlib import Path

from omniqual.deploy.embedded.manifest import (
    CheckpointManifest,
    inventory,
    read_manifest,
    recipe_hash,
    verify_files,
    write_manifest,
)


def _manifest(root: Path) -> CheckpointManifest:
    return CheckpointManifest(
        name="n",
        builder_version="1",
        seed=1,
        recipe_hash=recipe_hash("n", "1", 1, {"a": {"b": 1}}),
        configs={"a": {"b": 1}},
        library_versions={"torch": "x"},
        files=inventory(root),
    )


def test_inventory_hashes_sorted_relative_paths(tmp_path: Path) -> None:
    (tmp_path / "vae").mkdir()
    (tmp_path / "vae" / "w.safetensors").write_bytes(b"abc")
    (tmp_path / "model_index.json").write_text("{}")
    files = inventory(tmp_path)
    assert [f.path for f in files] == ["model_index.json", "vae/w.safetensors"]
    assert files[1].sha256 == hashlib.sha256(b"abc").hexdigest() and files[1].size == 3


def test_manifest_round_trips_and_is_excluded_from_inventory(tmp_path: Path) -> None:
    (tmp_path / "a.bin").write_bytes(b"1")
    manifest = _manifest(tmp_path)
    write_manifest(tmp_path, manifest)
    assert read_manifest(tmp_path) == manifest
    assert [f.path for f in inventory(tmp_path)] == ["a.bin"]
    assert verify_files(tmp_path, manifest) == []


def test_verify_reports_changes(tmp_path: Path) -> None:
    (tmp_path / "a.bin").write_bytes(b"1")
    (tmp_path / "b.bin").write_bytes(b"2")
    manifest = _manifest(tmp_path)
    (tmp_path / "a.bin").write_bytes(b"9")
    (tmp_path / "b.bin").unlink()
    (tmp_path / "c.bin").write_bytes(b"3")
    assert verify_files(tmp_path, manifest) == [
        "missing: b.bin",
        "unexpected: c.bin",
        "changed: a.bin",
    ]


def test_recipe_hash_ignores_key_order() -> None:
    assert recipe_hash("n", "1", 1, {"a": {"x": 1, "y": 2}}) == recipe_hash(
        "n", "1", 1, {"a": {"y": 2, "x": 1}}
    )


def test_unreadable_manifest_is_none(tmp_path: Path) -> None:
    (tmp_path / "omniqual-manifest.json").write_text("{not json")
    assert read_manifest(tmp_path) is None
