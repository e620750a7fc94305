"""The bundled tiny pipelines of the embedded target and the cache that builds their checkpoints.

Each ``BundledPipeline`` names the vLLM-Omni pipeline class that serves it, the extra server
arguments that select that class, the tasks and endpoints it should answer, and the checkpoint
build it uses (two entries may share one build). ``build_checkpoint`` materialises a checkpoint
under ``<cache_root>/<build name>-<recipe hash[:12]>``: reused while its recipe (configs, seed,
builder version) is unchanged, otherwise built into a temporary directory, checked with the plain
diffusers pipeline, given its manifest and renamed into place. No model hub is ever contacted.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from types import MappingProxyType
from typing import Any

from omniqual.deploy.embedded.builders import qwen_image, sd3, stable_audio, wan
from omniqual.deploy.embedded.builders.recipe import CheckpointBuilder
from omniqual.deploy.embedded.manifest import (
    MANIFEST_NAME,
    CheckpointManifest,
    inventory,
    read_manifest,
    write_manifest,
)

logger = logging.getLogger(__name__)

OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
_VERSIONED_LIBRARIES = ("torch", "diffusers", "transformers", "safetensors", "tokenizers")


@dataclass(frozen=True, slots=True)
class KnownFailure:
    """Why a bundled pipeline cannot be served on CPU: the exact message and where it stopped."""

    message: str
    stage: str


@dataclass(frozen=True, slots=True)
class BundledPipeline:
    name: str
    tasks: tuple[str, ...]
    # vLLM-Omni pipeline class that serves the checkpoint (its registry key).
    pipeline_class: str
    # Value for --model-class-name when it differs from the checkpoint's own class, else None.
    model_class_name: str | None
    endpoints: tuple[str, ...]
    builder: CheckpointBuilder
    known_failure: KnownFailure | None = None

    @property
    def server_args(self) -> tuple[str, ...]:
        """Arguments after ``vllm serve <checkpoint> --omni`` that select this pipeline."""
        if self.model_class_name is None:
            return ()
        return ("--model-class-name", self.model_class_name)


@dataclass(frozen=True, slots=True)
class BuiltCheckpoint:
    name: str
    path: Path
    manifest_path: Path
    recipe_hash: str
    rebuilt: bool


_ENTRIES = (
    BundledPipeline(
        name="sd3-tiny",
        tasks=("t2i",),
        pipeline_class="StableDiffusion3Pipeline",
        model_class_name=None,
        endpoints=("/v1/images/generations", "/v1/chat/completions"),
        builder=sd3.BUILDER,
    ),
    BundledPipeline(
        name="qwen-image-edit-tiny",
        tasks=("i2i",),
        pipeline_class="QwenImageEditPipeline",
        model_class_name=None,
        endpoints=("/v1/images/edits",),
        builder=qwen_image.BUILDER,
    ),
    BundledPipeline(
        name="qwen-image-tiny",
        tasks=("t2i",),
        pipeline_class="QwenImagePipeline",
        model_class_name="QwenImagePipeline",
        endpoints=("/v1/images/generations",),
        builder=qwen_image.BUILDER,
    ),
    BundledPipeline(
        name="wan-t2v-tiny",
        tasks=("t2v",),
        pipeline_class="WanPipeline",
        model_class_name=None,
        endpoints=("/v1/videos", "/v1/videos/sync"),
        builder=wan.T2V_BUILDER,
    ),
    BundledPipeline(
        name="wan-i2v-tiny",
        tasks=("i2v",),
        pipeline_class="WanImageToVideoPipeline",
        model_class_name=None,
        endpoints=("/v1/videos", "/v1/videos/sync"),
        builder=wan.I2V_BUILDER,
    ),
    BundledPipeline(
        name="stable-audio-tiny",
        tasks=("t2a",),
        pipeline_class="StableAudioPipeline",
        model_class_name=None,
        endpoints=("/v1/audio/generate",),
        builder=stable_audio.BUILDER,
    ),
)

PIPELINES: Mapping[str, BundledPipeline] = MappingProxyType({e.name: e for e in _ENTRIES})


def checkpoint_dir(cache_root: Path, builder: CheckpointBuilder) -> Path:
    return cache_root / f"{builder.name}-{builder.recipe_hash[:12]}"


@contextmanager
def hub_offline() -> Iterator[None]:
    """Force Hugging Face libraries offline for the duration of a build, then restore."""
    saved = {key: os.environ.get(key) for key in OFFLINE_ENV}
    os.environ.update(OFFLINE_ENV)
    constants = _loaded_hub_constants()
    saved_flag = getattr(constants, "HF_HUB_OFFLINE", None) if constants else None
    if constants is not None:
        # huggingface_hub reads the variable at import; an already imported one needs the flag.
        constants.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        if constants is not None:
            constants.HF_HUB_OFFLINE = saved_flag
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _loaded_hub_constants() -> Any:
    import sys

    return sys.modules.get("huggingface_hub.constants")


def _library_versions() -> dict[str, str]:
    versions: dict[str, str] = {}
    for name in _VERSIONED_LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "absent"
    return versions


def _is_current(path: Path, builder: CheckpointBuilder) -> bool:
    manifest = read_manifest(path)
    return manifest is not None and manifest.recipe_hash == builder.recipe_hash


def _build_into(staging: Path, builder: CheckpointBuilder) -> Path:
    with hub_offline():
        builder.write(staging, builder)
        builder.check(staging)
    manifest = CheckpointManifest(
        name=builder.name,
        builder_version=builder.version,
        seed=builder.seed,
        recipe_hash=builder.recipe_hash,
        configs={k: dict(v) for k, v in builder.configs.items()},
        library_versions=_library_versions(),
        files=inventory(staging),
    )
    return write_manifest(staging, manifest)


def build_checkpoint(name: str, cache_root: Path, *, force: bool = False) -> BuiltCheckpoint:
    """Return the checkpoint of pipeline ``name``, building it only when missing or stale."""
    builder = PIPELINES[name].builder
    final = checkpoint_dir(cache_root, builder)
    manifest_path = final / MANIFEST_NAME
    if not force and _is_current(final, builder):
        return BuiltCheckpoint(name, final, manifest_path, builder.recipe_hash, rebuilt=False)
    cache_root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=cache_root))
    staging.chmod(0o755)  # mkdtemp makes it private; the checkpoint is meant to be shared
    try:
        _build_into(staging, builder)
        if not force and _is_current(final, builder):
            # Another process built the same recipe meanwhile (two runs sharing one cache), and
            # may already serve from it: keep its tree, identical to this one.
            shutil.rmtree(staging, ignore_errors=True)
            return BuiltCheckpoint(name, final, manifest_path, builder.recipe_hash, rebuilt=False)
        if final.exists():
            # A stale or forced rebuild: move the old tree aside so the swap stays atomic.
            retired = Path(tempfile.mkdtemp(prefix=f".{final.name}.old.", dir=cache_root))
            final.rename(retired / "checkpoint")
            shutil.rmtree(retired, ignore_errors=True)
        try:
            staging.rename(final)
        except OSError:
            if not _is_current(final, builder):
                raise
            # Another process finished the same recipe first; its result is identical.
            shutil.rmtree(staging, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    logger.info("built checkpoint %s at %s", name, final)
    return BuiltCheckpoint(name, final, manifest_path, builder.recipe_hash, rebuilt=True)
