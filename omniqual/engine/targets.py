"""Bring the target a recipe describes into being for a group of gates, and take it down.

Embedded recipes get their bundled checkpoint built (cached) first; ``url`` recipes and
campaign overrides point at an existing deployment; everything launched is stopped however the
block ends, and its log is kept as evidence."""

import asyncio
import hashlib
import importlib.metadata
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from omniqual.checks.base import LaunchAttempt, TargetInfo
from omniqual.client.client import OmniClient
from omniqual.client.errors import ClientError
from omniqual.deploy.launcher import launch, probe_startup, stop
from omniqual.deploy.state import omniqual_home
from omniqual.domain.evidence import Artifact
from omniqual.domain.provenance import Provenance
from omniqual.domain.recipe import LaunchRecipe, RecipeKind
from omniqual.domain.redaction import scrub_text
from omniqual.engine.store import RunWriter
from omniqual.specs.recipes import LoadedRecipe


class TargetNotReady(ClientError):
    """A given deployment answered, but not as a ready server."""


@dataclass(frozen=True, slots=True)
class PreparedModel:
    model: str | None
    checkpoint_dir: Path | None
    provenance: Provenance


def _package_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def prepare_model(recipe: LaunchRecipe, base: Provenance) -> PreparedModel:
    """Build an embedded recipe's checkpoint (cached); say which revisions the evidence is at."""
    if recipe.kind is not RecipeKind.EMBEDDED or recipe.pipeline is None:
        version = _package_version("vllm-omni") if recipe.kind is RecipeKind.COMMAND else None
        provenance = base.model_copy(update={"model": recipe.model, "vllm_omni_version": version})
        return PreparedModel(recipe.model, None, provenance)
    from omniqual.deploy.embedded.catalog import build_checkpoint

    built = build_checkpoint(recipe.pipeline, omniqual_home() / "checkpoints")
    manifest_hash = hashlib.sha256(Path(built.manifest_path).read_bytes()).hexdigest()
    provenance = base.model_copy(
        update={
            "model": recipe.pipeline,
            "model_revision": f"bundled:{Path(built.path).name}",
            "checkpoint_sha256": manifest_hash,
            "vllm_omni_version": _package_version("vllm-omni"),
        }
    )
    return PreparedModel(str(built.path), Path(built.path), provenance)


def store_log(writer: RunWriter, log_path: Path | None, name: str) -> Artifact | None:
    if log_path is None or not log_path.is_file():
        return None
    text = scrub_text(log_path.read_text(encoding="utf-8", errors="replace"))
    return writer.put_artifact(
        text.encode("utf-8"), media_type="text/plain", role="server-log", name=name
    )


async def check_reachable(url: str) -> None:
    """A deployment given by URL must answer /health before any gate runs: a dead or
    misbehaving target is one clear error, not a column of invalid results."""
    async with OmniClient(url) as client:
        health = await client.health()
    if not health.healthy:
        raise TargetNotReady(f"{url}/health answered HTTP {health.status}: the target is not ready")


@asynccontextmanager
async def served(
    loaded: LoadedRecipe, prepared: PreparedModel, writer: RunWriter, url: str | None
) -> AsyncIterator[TargetInfo]:
    """A served target for the block: ``url`` if given, else the recipe launched."""
    recipe = loaded.recipe
    if url is not None or recipe.kind is RecipeKind.URL:
        base = url or recipe.url
        if base is not None:
            await check_reachable(base)
        yield TargetInfo(url=base, recipe=recipe, checkpoint_dir=prepared.checkpoint_dir,
                         label=base or recipe.id)  # fmt: skip
        return
    log_path = writer.run_dir / "logs" / f"{recipe.id}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    # A private TMPDIR makes the server's temporary files observable: residue is a leak.
    temp_dir = Path(tempfile.mkdtemp(prefix=f"omniqual-{recipe.id}-"))
    target = await asyncio.to_thread(
        launch, recipe, model=prepared.model, log_path=log_path, recipe_dir=loaded.directory,
        name=f"run-{writer.run_id}-{recipe.id}", extra_env={"TMPDIR": str(temp_dir)},
    )  # fmt: skip
    try:
        yield TargetInfo(
            url=target.url, recipe=recipe, pid=target.pid,
            checkpoint_dir=prepared.checkpoint_dir, log_path=target.log_path,
            temp_dirs=(temp_dir,), label=f"{recipe.id} @ {target.url}",
        )  # fmt: skip
    finally:
        await asyncio.to_thread(stop, target)
        shutil.rmtree(temp_dir, ignore_errors=True)


async def attempt_launch(
    loaded: LoadedRecipe, prepared: PreparedModel, writer: RunWriter
) -> LaunchAttempt:
    """Start a recipe that is expected to be refused; keep its log as evidence."""
    recipe = loaded.recipe
    log_path = writer.run_dir / "logs" / f"{recipe.id}-attempt.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    startup = await asyncio.to_thread(
        probe_startup, recipe, model=prepared.model, log_path=log_path,
        recipe_dir=loaded.directory, name=f"probe-{writer.run_id}-{recipe.id}",
    )  # fmt: skip
    return LaunchAttempt(startup, store_log(writer, startup.log_path, f"{recipe.id} startup log"))
