"""The catalog lists every bundled pipeline, and the checkpoint cache builds only when needed."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from omniqual.deploy.embedded import catalog
from omniqual.deploy.embedded.builders.recipe import CheckpointBuilder
from omniqual.deploy.embedded.catalog import PIPELINES, BundledPipeline
from omniqual.deploy.embedded.manifest import MANIFEST_NAME, read_manifest


def test_catalog_names_tasks_and_shared_qwen_build() -> None:
    assert set(PIPELINES) >= {
        "sd3-tiny",
        "qwen-image-edit-tiny",
        "qwen-image-tiny",
        "wan-t2v-tiny",
        "stable-audio-tiny",
    }
    assert PIPELINES["qwen-image-tiny"].builder is PIPELINES["qwen-image-edit-tiny"].builder
    assert PIPELINES["qwen-image-tiny"].server_args == ("--model-class-name", "QwenImagePipeline")
    assert PIPELINES["sd3-tiny"].server_args == ()
    assert "/v1/images/edits" in PIPELINES["qwen-image-edit-tiny"].endpoints
    assert "/v1/videos/sync" in PIPELINES["wan-t2v-tiny"].endpoints
    assert PIPELINES["stable-audio-tiny"].tasks == ("t2a",)
    for entry in PIPELINES.values():
        assert entry.known_failure is None or entry.known_failure.message


def test_recipe_hash_is_stable_and_tracks_seed_version_and_configs() -> None:
    builder = PIPELINES["sd3-tiny"].builder
    assert builder.recipe_hash == PIPELINES["sd3-tiny"].builder.recipe_hash
    assert dataclasses.replace(builder, seed=builder.seed + 1).recipe_hash != builder.recipe_hash
    assert dataclasses.replace(builder, version="x").recipe_hash != builder.recipe_hash
    changed = {**builder.configs, "scheduler": {"shift": 1.0}}
    assert dataclasses.replace(builder, configs=changed).recipe_hash != builder.recipe_hash


def test_fresh_configs_are_copies() -> None:
    builder = PIPELINES["qwen-image-edit-tiny"].builder
    before = builder.recipe_hash
    fresh = builder.fresh_configs()
    fresh["text_encoder"]["text_config"]["rope_scaling"]["rope_type"] = "mutated"
    assert builder.recipe_hash == before


def _fake_builder(
    calls: list[str], *, fail_check: bool = False, seed: int = 7
) -> CheckpointBuilder:
    def write(target: Path, builder: CheckpointBuilder) -> None:
        calls.append(os.environ.get("HF_HUB_OFFLINE", ""))
        (target / "model_index.json").write_text('{"_class_name": "Fake"}')
        (target / "weights").mkdir()
        (target / "weights" / "a.safetensors").write_bytes(bytes([builder.seed]) * 10)

    def check(target: Path) -> None:
        if fail_check:
            raise RuntimeError("diffusers check failed")

    return CheckpointBuilder("fake-tiny", "1", seed, {"c": {"x": 1}}, write, check)


@pytest.fixture
def fake_entry(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    entry = BundledPipeline("fake-tiny", ("t2i",), "Fake", None, (), _fake_builder(calls))
    monkeypatch.setattr(catalog, "PIPELINES", {"fake-tiny": entry})
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    return calls


def test_build_is_cached_by_recipe_and_offline(tmp_path: Path, fake_entry: list[str]) -> None:
    first = catalog.build_checkpoint("fake-tiny", tmp_path)
    assert first.rebuilt and first.path.name == f"fake-tiny-{first.recipe_hash[:12]}"
    assert fake_entry == ["1"] and "HF_HUB_OFFLINE" not in os.environ
    manifest = read_manifest(first.path)
    assert manifest is not None and first.manifest_path == first.path / MANIFEST_NAME
    assert [f.path for f in manifest.files] == ["model_index.json", "weights/a.safetensors"]
    assert manifest.files[1].size == 10 and manifest.seed == 7

    second = catalog.build_checkpoint("fake-tiny", tmp_path)
    assert not second.rebuilt and len(fake_entry) == 1
    forced = catalog.build_checkpoint("fake-tiny", tmp_path, force=True)
    assert forced.rebuilt and len(fake_entry) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == [first.path.name]


def test_changed_recipe_builds_a_new_directory(
    tmp_path: Path, fake_entry: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    old = catalog.build_checkpoint("fake-tiny", tmp_path)
    entry = BundledPipeline("fake-tiny", ("t2i",), "Fake", None, (), _fake_builder([], seed=8))
    monkeypatch.setattr(catalog, "PIPELINES", {"fake-tiny": entry})
    new = catalog.build_checkpoint("fake-tiny", tmp_path)
    assert new.rebuilt and new.path != old.path
    assert (new.path / "weights" / "a.safetensors").read_bytes() == bytes([8]) * 10


def test_failed_check_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = BundledPipeline(
        "fake-tiny", ("t2i",), "Fake", None, (), _fake_builder([], fail_check=True)
    )
    monkeypatch.setattr(catalog, "PIPELINES", {"fake-tiny": entry})
    with pytest.raises(RuntimeError, match="diffusers check failed"):
        catalog.build_checkpoint("fake-tiny", tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_build_finished_meanwhile_by_another_process_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs sharing one cache build the same recipe at once: the one that finishes second
    keeps the first one's tree (a server may already be loading from it) and drops its own."""
    calls: list[str] = []
    entry = BundledPipeline("fake-tiny", ("t2i",), "Fake", None, (), _fake_builder(calls))
    monkeypatch.setattr(catalog, "PIPELINES", {"fake-tiny": entry})
    real_build = catalog._build_into
    finished_first: list[Path] = []
    started: list[Path] = []

    def other_process_finishes_first(staging: Path, builder: CheckpointBuilder) -> None:
        started.append(staging)
        if len(started) == 1:  # the other run's whole build lands while this one writes
            finished_first.append(catalog.build_checkpoint("fake-tiny", tmp_path).path)
            (finished_first[0] / "in-use").write_text("a server reads this tree")
        real_build(staging, builder)

    monkeypatch.setattr(catalog, "_build_into", other_process_finishes_first)
    second = catalog.build_checkpoint("fake-tiny", tmp_path)
    assert second.path == finished_first[0] and not second.rebuilt
    assert (second.path / "in-use").exists()  # not moved aside and deleted
    assert sorted(p.name for p in tmp_path.iterdir()) == [second.path.name]  # no staging left
