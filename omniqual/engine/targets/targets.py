"""Bring the target a recipe describes into being for a group of gates, and take it down.

Embedded recipes get their bundled checkpoint built (cached) first; ``url`` recipes and
campaign overrides point at an existing deployment; everything launched is stopped however the
block ends, and its log is kept as evidence."""

import asyncio
import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from omniqual.checks.base import LaunchAttempt, TargetInfo
from omniqual.client.client import OmniClient
from omniqual.client.errors import ClientError
from omniqual.deploy.agent.client import AgentAccess
from omniqual.deploy.embedded.manifest import canonical_json, inventory
from omniqual.deploy.launcher import launch, placeholder_values, probe_startup, stop
from omniqual.deploy.serve_config import FILE_FLAGS, flag_name, serve_config_sha256
from omniqual.deploy.state import omniqual_home
from omniqual.deploy.target_software import probe_target_software
from omniqual.domain.axes import RowKey
from omniqual.domain.evidence import Artifact
from omniqual.domain.provenance import UNKNOWN, Provenance
from omniqual.domain.recipe import LaunchRecipe, RecipeKind
from omniqual.domain.redaction import redact_command, scrub_text
from omniqual.engine.run import host_share, timing
from omniqual.engine.targets import served_identity
from omniqual.evidence.store import RunWriter
from omniqual.specs.recipes import LoadedRecipe


class TargetNotReady(ClientError):
    """A given deployment answered, but not as a ready server."""


class TargetMismatch(ClientError):
    """A given deployment is not what the rows planned on it are: nothing may be recorded."""


def check_serves_rows(identity: served_identity.ServedIdentity, recipe: LaunchRecipe,
                      rows: list[RowKey]) -> None:  # fmt: skip
    """Stop before any gate when the URL standing in for ``recipe`` is not its deployment."""
    for row in rows:
        expected = served_identity.expected_model(recipe, row)
        verdict = served_identity.judge_row(identity, row, recipe.id, recipe, expected)
        if verdict.reason is not None:
            raise TargetMismatch(
                f"{identity.describe()}, which is not recipe {recipe.id!r} of row {row}: "
                f"{verdict.reason}; nothing was recorded"
            )


@dataclass(frozen=True, slots=True)
class PreparedModel:
    model: str | None
    """The value of ``{model}``: the built checkpoint (embedded) or the recipe's model."""
    checkpoint_dir: Path | None
    provenance: Provenance
    """What the launched deployment is (or, for a URL, the base the server's answers fill)."""


def prepare_model(
    recipe: LaunchRecipe, base: Provenance, recipe_dir: Path | None = None
) -> PreparedModel:
    """Build an embedded recipe's checkpoint (cached); measure what a launch of it will be."""
    if recipe.kind is RecipeKind.URL:
        return PreparedModel(None, None, base)
    checkpoint: Path | None = None
    updates: dict[str, object] = {"model_revision": UNKNOWN}
    if recipe.kind is RecipeKind.EMBEDDED and recipe.pipeline is not None:
        from omniqual.deploy.embedded.catalog import build_checkpoint

        built = build_checkpoint(recipe.pipeline, omniqual_home() / "checkpoints")
        checkpoint = Path(built.path)
        manifest_hash = hashlib.sha256(Path(built.manifest_path).read_bytes()).hexdigest()
        updates = {
            "model_revision": f"bundled:{checkpoint.name}",
            "checkpoint_sha256": manifest_hash,
        }
        model: str | None = str(checkpoint)
    else:
        model = recipe.model
        local = Path(model) if model else None
        checkpoint = local if local is not None and local.is_dir() else None
        updates["checkpoint_sha256"] = (
            local_checkpoint_sha256(checkpoint) if checkpoint else UNKNOWN
        )
    argv = recipe.render_argv(placeholder_values(recipe, "127.0.0.1", 0, model, recipe_dir))
    env = recipe.effective_env()
    software = probe_target_software(argv, {**os.environ, **env})
    provenance = base.model_copy(
        update={
            **updates,
            "model": served_model_id(recipe, model),
            "vllm_omni_version": software.vllm_omni_version,
            "vllm_omni_commit": software.vllm_omni_commit,
            "vllm_version": software.vllm_version,
            "serve_config_sha256": serve_config_sha256(argv, env),
            "source": "launched",
            "target_host": "harness-host",
        }
    )
    return PreparedModel(model, checkpoint, provenance)


def served_model_id(recipe: LaunchRecipe, model: str | None) -> str:
    """The id the launched server answers to: ``--served-model-name``, else its model."""
    named = recipe.flags.get("served-model-name")
    if isinstance(named, str) and named.strip():
        return named.split()[0]
    return model or UNKNOWN


def local_checkpoint_sha256(root: Path) -> str:
    """sha256 over the sorted (path, sha256, size) of every file of a local checkpoint."""
    listing = [f.model_dump() for f in inventory(root)]
    return hashlib.sha256(canonical_json(listing).encode("utf-8")).hexdigest()


def launched_provenance(prepared: PreparedModel, argv: tuple[str, ...]) -> Provenance:
    """The prepared provenance with the serve argv exactly as it was launched."""
    return prepared.provenance.model_copy(update={"serve_argv": redact_command(argv)})


def store_log(writer: RunWriter, log_path: Path | None, name: str) -> Artifact | None:
    if log_path is None or not log_path.is_file():
        return None
    text = scrub_text(log_path.read_text(encoding="utf-8", errors="replace"))
    return writer.put_artifact(
        text.encode("utf-8"), media_type="text/plain", role="server-log", name=name
    )


DEPLOY_CONFIG_ROLE = "deploy-config"
_YAML_SUFFIXES = (".yaml", ".yml")


def config_file_paths(argv: tuple[str, ...]) -> list[str]:
    """The files a serve argv names by a config flag (``--deploy-config x.yaml`` or ``=x.yaml``)."""
    found: list[str] = []
    for i, token in enumerate(argv):
        written, inline, value = token.partition("=")
        if not token.startswith("--") or flag_name(written) not in FILE_FLAGS:
            continue
        given = value if inline else (argv[i + 1] if i + 1 < len(argv) else "")
        if given and not given.startswith("-"):
            found.append(given)
    return found


def store_deploy_configs(writer: RunWriter, argv: tuple[str, ...]) -> tuple[Artifact, ...]:
    """Keep every config file the launch read, so a report can show the deploy config and not
    only its name. Evidence travels (PR attachments): secrets in it (tokens, keys, passwords)
    are masked as in server logs, so only a file with nothing to mask is stored byte for byte
    and has the content hash the serve config fingerprint holds. A file that cannot be read as
    text is not stored: the report then says the file is named but not recorded."""
    stored: list[Artifact] = []
    for given in dict.fromkeys(config_file_paths(argv)):
        path = Path(given)  # relative paths resolve as the launched process (same cwd) read them
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        media = "application/yaml" if path.suffix.lower() in _YAML_SUFFIXES else "text/plain"
        scrubbed = scrub_text(text)
        data = path if scrubbed == text else scrubbed.encode("utf-8")
        stored.append(writer.put_artifact(data, media_type=media, role=DEPLOY_CONFIG_ROLE,
                                          name=path.name))  # fmt: skip
    return tuple(stored)


async def check_reachable(url: str) -> None:
    """A deployment given by URL must answer /health before any gate runs: a dead or
    misbehaving target is one clear error, not a column of invalid results."""
    async with OmniClient(url) as client:
        health = await client.health()
    if not health.healthy:
        raise TargetNotReady(f"{url}/health answered HTTP {health.status}: the target is not ready")


async def answers_health(url: str | None, timeout_s: float = 10.0) -> bool:
    """Whether a launched server still answers ``/health`` (False once it crashed or hung)."""
    if url is None:
        return False
    try:
        async with asyncio.timeout(timeout_s), OmniClient(url) as client:
            return (await client.health()).healthy
    except (TimeoutError, ClientError):
        return False


@dataclass(frozen=True, slots=True)
class ServedTarget:
    info: TargetInfo
    provenance: Provenance
    """What answered: measured at launch, or what a URL deployment reported about itself."""
    identity: served_identity.ServedIdentity | None = None
    """What a URL deployment reported (None for a launch)."""
    configs: tuple[Artifact, ...] = ()
    """The config files the launch's argv names, stored (role ``deploy-config``): every gate
    result served by this launch carries them."""
    startup_s: float | None = None
    """A launch's measured time to ready (None for a deployment given by URL)."""


@asynccontextmanager
async def served(
    loaded: LoadedRecipe, prepared: PreparedModel, writer: RunWriter, url: str | None,
    role: str = "", pid: int | None = None, tag: str = "", agent: AgentAccess | None = None,
) -> AsyncIterator[ServedTarget]:  # fmt: skip
    """A served target for the block: ``url`` if given, else the recipe launched. ``role``
    (e.g. ``reference``) names a second launch of a recipe apart from the first (state, log);
    ``tag`` (a launch group's) keeps apart launches of one recipe and role made at once."""
    recipe = loaded.recipe
    if url is not None or recipe.kind is RecipeKind.URL:
        base = url or recipe.url
        assert base is not None  # a url recipe always has one (LaunchRecipe checks)
        await check_reachable(base)
        identity = await served_identity.identify_deployment(base)
        # Another server answered: nothing of the local recipe's checkpoint or launch applies.
        # ``pid``: the user named the URL server's process on this host, so its CPU time,
        # memory and temp dir can be watched as for a launched one; ``agent``: an omniqual
        # agent beside it on its own host reads the same for the harness.
        info = TargetInfo(url=base, recipe=recipe, label=base, pid=pid, agent=agent)
        yield ServedTarget(info, identity.provenance(prepared.provenance), identity)
        return
    stem = "-".join(part for part in (recipe.id, role, tag) if part)
    log_path = writer.run_dir / "logs" / f"{stem}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    # A private TMPDIR makes the server's temporary files observable: residue is a leak.
    temp_dir = Path(tempfile.mkdtemp(prefix=f"omniqual-{recipe.id}-"))
    handle = timing.launch_started(
        recipe.id, "reference" if role.startswith("reference") else "target"
    )
    began = time.monotonic()
    try:
        # Beside other launch groups (--jobs), a start-up is an activity on the shared host,
        # on the devices given to this group (inside a gate, part of it: see start_up).
        async with host_share.start_up(recipe.id):
            target = await asyncio.to_thread(
                launch, recipe, model=prepared.model, log_path=log_path,
                recipe_dir=loaded.directory, name=f"run-{writer.run_id}-{stem}",
                extra_env={"TMPDIR": str(temp_dir), **host_share.launch_env()},
            )  # fmt: skip
    except BaseException:
        timing.launch_ended(handle, time.monotonic() - began, ready=False)
        timing.launch_stopped(handle)
        shutil.rmtree(temp_dir, ignore_errors=True)
        raise
    timing.launch_ended(handle, target.time_to_ready_s, ready=True)
    try:
        info = TargetInfo(
            url=target.url, recipe=recipe, pid=target.pid,
            checkpoint_dir=prepared.checkpoint_dir, log_path=target.log_path,
            temp_dirs=(temp_dir,), label=f"{recipe.id} @ {target.url}",
        )  # fmt: skip
        configs = store_deploy_configs(writer, target.command)
        with host_share.server_up(recipe.id, role, target.pid):
            yield ServedTarget(info, launched_provenance(prepared, target.command),
                               configs=configs, startup_s=target.time_to_ready_s)  # fmt: skip
    finally:
        await asyncio.to_thread(stop, target)
        timing.launch_stopped(handle)
        shutil.rmtree(temp_dir, ignore_errors=True)


async def attempt_launch(
    loaded: LoadedRecipe, prepared: PreparedModel, writer: RunWriter
) -> LaunchAttempt:
    """Start a recipe that is expected to be refused; keep its log as evidence."""
    recipe = loaded.recipe
    log_path = writer.run_dir / "logs" / f"{recipe.id}-attempt.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    handle = timing.launch_started(recipe.id, "attempt")
    # Never a shared start-up (host_share.start_up): the refusal is what its gate times.
    startup = await asyncio.to_thread(
        probe_startup, recipe, model=prepared.model, log_path=log_path,
        recipe_dir=loaded.directory, name=f"probe-{writer.run_id}-{recipe.id}",
        extra_env=host_share.launch_env(),
    )  # fmt: skip
    timing.launch_ended(handle, startup.elapsed_s, ready=startup.became_ready)
    timing.launch_stopped(handle)
    return LaunchAttempt(startup, store_log(writer, startup.log_path, f"{recipe.id} startup log"))
