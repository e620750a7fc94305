"""Building a bundled checkpoint is deterministic, cached by recipe, sharded and manifest-true."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omniqual.deploy.embedded.catalog import build_checkpoint
from omniqual.deploy.embedded.manifest import read_manifest, verify_files
from tests.integration.embedded.embedded_presence import INSTALL_HINT
from tests.requirements import require_module

pytestmark = [pytest.mark.integration, pytest.mark.embedded]


@pytest.fixture(autouse=True)
def diffusers_installed() -> None:
    """Per test, not at import: a failure in collection would stop the fast tier's run too."""
    require_module("diffusers", INSTALL_HINT, require_variable="OMNIQUAL_REQUIRE_EMBEDDED")


def test_sd3_build_is_sharded_cached_and_byte_identical_on_rebuild(tmp_path: Path) -> None:
    first = build_checkpoint("sd3-tiny", tmp_path)
    assert first.rebuilt
    assert first.path.name == f"sd3-tiny-{first.recipe_hash[:12]}"
    manifest = read_manifest(first.path)
    assert manifest is not None
    assert verify_files(first.path, manifest) == []
    shards = sorted(p.name for p in (first.path / "transformer").glob("*.safetensors"))
    assert len(shards) >= 2
    index = json.loads(
        (first.path / "transformer" / "diffusion_pytorch_model.safetensors.index.json").read_text()
    )
    assert sorted(set(index["weight_map"].values())) == shards

    again = build_checkpoint("sd3-tiny", tmp_path)
    assert not again.rebuilt and again.path == first.path

    forced = build_checkpoint("sd3-tiny", tmp_path, force=True)
    assert forced.rebuilt and forced.path == first.path
    rebuilt_manifest = read_manifest(forced.path)
    assert rebuilt_manifest is not None
    assert rebuilt_manifest.files == manifest.files
    # Only the finished checkpoint remains: no staging or retired directories.
    assert [p.name for p in tmp_path.iterdir()] == [first.path.name]


def test_qwen_entries_share_one_build(tmp_path: Path) -> None:
    edit = build_checkpoint("qwen-image-edit-tiny", tmp_path)
    generate = build_checkpoint("qwen-image-tiny", tmp_path)
    assert edit.rebuilt and not generate.rebuilt
    assert generate.path == edit.path
