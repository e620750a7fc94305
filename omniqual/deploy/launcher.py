"""The generic launcher: start a recipe's server, wait until it is ready, stop it without leftovers.

A server runs in a new session (its own process group) with stdout and stderr captured to a log
file that becomes an evidence artifact. Startup either ends ready (``LaunchedTarget``, with
time-to-ready and process-tree RSS) or fails with ``LaunchError`` carrying the exit code and the
log tail. ``probe_startup`` turns either into a ``StartupOutcome`` that a fail-fast gate records
for recipes expected to be rejected. Every launch writes ``$OMNIQUAL_HOME/targets/<name>.json``;
non-persistent launches are also stopped by :mod:`omniqual.deploy.reaper` if omniqual exits, and
by their :mod:`omniqual.deploy.watchdog` if omniqual is killed outright (SIGKILL); their state
records the owning process, so a later command recognises and reaps what a killed run left.
"""

import logging
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, TypedDict, Unpack

import psutil

from omniqual.deploy import reaper, watchdog
from omniqual.deploy.ports import free_port, port_in_use
from omniqual.deploy.process_tree import terminate_tree, tree_rss_bytes
from omniqual.deploy.readiness import is_ready
from omniqual.deploy.server_log import log_tail, search_log
from omniqual.deploy.state import (
    TargetState,
    omniqual_home,
    owner_identity,
    read_state,
    remove_state,
    write_state,
)
from omniqual.domain.recipe import Expectation, LaunchRecipe, RecipeKind

logger = logging.getLogger(__name__)

FailureReason = Literal["exited", "timeout", "port-in-use", "spawn-failed", "already-running"]

LAUNCH_MARKER = "# omniqual launch "
"""Starts the line the launcher writes into the log before each launch (logs may be reused)."""

_children: dict[int, "subprocess.Popen[bytes]"] = {}
"""Servers this process spawned and has not reaped yet, by pid."""


class LaunchOptions(TypedDict, total=False):
    """Keyword options shared by launch, launched and probe_startup (all optional)."""

    name: str | None
    """Target name for the state file; defaults to the recipe id."""
    model: str | None
    """Value of ``{model}``: the built checkpoint for embedded recipes; else ``recipe.model``."""
    host: str
    """Default 127.0.0.1."""
    port: int | None
    """None picks a free port."""
    log_path: Path | None
    """Default ``$OMNIQUAL_HOME/logs/<name>-<utc stamp>.log``."""
    recipe_dir: Path | None
    """Value of ``{recipe_dir}``."""
    persist: bool
    """Leave the server running after omniqual exits (``target up``)."""
    state_dir: Path | None
    """Default ``$OMNIQUAL_HOME/targets``."""
    extra_env: Mapping[str, str] | None


@dataclass(frozen=True, slots=True)
class LaunchedTarget:
    name: str
    recipe_id: str
    url: str
    host: str
    port: int
    pid: int
    pgid: int
    log_path: Path
    command: tuple[str, ...]
    started_at: datetime
    time_to_ready_s: float
    startup_rss_bytes: int
    grace_s: float


class LaunchError(RuntimeError):
    """The server did not become ready; nothing launched is left running."""

    def __init__(
        self,
        message: str,
        *,
        reason: FailureReason,
        recipe_id: str,
        command: tuple[str, ...] = (),
        exit_code: int | None = None,
        elapsed_s: float = 0.0,
        log_path: Path | None = None,
        log_tail: tuple[str, ...] = (),
        pid: int | None = None,
    ) -> None:
        super().__init__(message)
        self.pid = pid
        self.reason: FailureReason = reason
        self.recipe_id = recipe_id
        self.command = command
        self.exit_code = exit_code
        self.elapsed_s = elapsed_s
        self.log_path = log_path
        self.log_tail = log_tail


@dataclass(frozen=True, slots=True)
class StartupOutcome:
    """What one startup attempt showed, for fail-fast gates and `target up` messages."""

    recipe_id: str
    expected: Expectation
    became_ready: bool
    reason: Literal["ready"] | FailureReason
    exit_code: int | None
    elapsed_s: float
    log_path: Path | None
    log_tail: tuple[str, ...]
    command: tuple[str, ...]
    expected_error_matched: bool | None
    """Whether the recipe's ``expected_error`` regex matched the log (None: no regex)."""

    @property
    def as_expected(self) -> bool:
        if self.expected is Expectation.SERVES:
            return self.became_ready
        return (
            not self.became_ready
            and self.reason in ("exited", "timeout")
            and self.expected_error_matched is not False
        )


def placeholder_values(
    recipe: LaunchRecipe, host: str, port: int, model: str | None, recipe_dir: Path | None
) -> dict[str, str]:
    values = {"host": host, "port": str(port), "bindir": str(Path(sys.executable).parent)}
    chosen = model if model is not None else recipe.model
    if chosen is not None:
        values["model"] = chosen
    if recipe_dir is not None:
        values["recipe_dir"] = str(recipe_dir)
    return values


def _check_name_free(name: str, recipe_id: str, state_dir: Path | None) -> None:
    held = read_state(name, state_dir)
    if held is None:
        return
    if held.alive() and held.orphaned():
        # Left by an omniqual killed outright (e.g. the run being resumed): nobody owns it.
        logger.warning("stopping %s (pid %d): its owner pid %s is gone", name, held.pid,
                       held.owner_pid)  # fmt: skip
        reaper.reap(held, state_dir)
        return
    if held.alive():
        raise LaunchError(
            f"target {name!r} is already running (pid {held.pid}, {held.url});"
            f" stop it with `omniqual target down {name}`",
            reason="already-running",
            recipe_id=recipe_id,
        )
    remove_state(name, state_dir)  # a stale record from a run that was killed outright


def launch(recipe: LaunchRecipe, **options: Unpack[LaunchOptions]) -> LaunchedTarget:
    """Start ``recipe`` and wait for readiness; raise LaunchError (with the log tail) otherwise.

    Unless ``options.persist``, the server is stopped at interpreter exit or on SIGTERM/SIGHUP
    at the latest.
    """
    host = options.get("host") or "127.0.0.1"
    port = options.get("port")
    log_path = options.get("log_path")
    state_dir = options.get("state_dir")
    if recipe.kind is RecipeKind.URL:
        raise ValueError(f"recipe {recipe.id!r} is an existing deployment; nothing to launch")
    name = options.get("name") or recipe.id
    _check_name_free(name, recipe.id, state_dir)
    if port is None:
        port = free_port(host)
    elif port_in_use(host, port):
        raise LaunchError(
            f"port {port} on {host} is already in use; choose another --port or omit it",
            reason="port-in-use",
            recipe_id=recipe.id,
        )
    argv = recipe.render_argv(
        placeholder_values(recipe, host, port, options.get("model"), options.get("recipe_dir"))
    )
    if log_path is None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        log_path = omniqual_home() / "logs" / f"{name}-{stamp}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        **recipe.effective_env(),
        **(options.get("extra_env") or {}),
    }
    started_at = datetime.now(UTC)
    start = time.monotonic()
    with log_path.open("ab") as log:
        log.write(f"{LAUNCH_MARKER}{recipe.id} at {started_at.isoformat()}\n".encode())
        log.flush()
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            raise LaunchError(
                f"cannot start {argv[0]!r}: {exc.strerror or exc}",
                reason="spawn-failed",
                recipe_id=recipe.id,
                command=argv,
                log_path=log_path,
            ) from None
    grace = recipe.stop.grace_s
    _children[proc.pid] = proc

    def cleanup() -> None:
        _terminate(proc, grace, host, port)
        remove_state(name, state_dir)

    reaper.register(proc.pid, cleanup)
    persist = options.get("persist", False)
    try:
        create_time = psutil.Process(proc.pid).create_time()
        owner: tuple[int | None, float | None] = (None, None)
        if not persist:
            owner = owner_identity()
            watchdog.start(proc.pid, create_time, grace, log_path)
        url = f"http://{host}:{port}"
        state = TargetState(
            name=name, recipe_id=recipe.id, pid=proc.pid, pgid=proc.pid,
            create_time=create_time, host=host, port=port, url=url, log_path=str(log_path),
            command=argv, started_at=started_at, grace_s=grace, owner_pid=owner[0],
            owner_create_time=owner[1],
        )  # fmt: skip
        write_state(state, state_dir)
        _wait_ready(recipe, proc, url, start, argv, log_path)
        ready_s = time.monotonic() - start
        rss = tree_rss_bytes(proc.pid)
        write_state(
            state.model_copy(update={"time_to_ready_s": ready_s, "startup_rss_bytes": rss}),
            state_dir,
        )
    except BaseException as exc:
        # Early death, timeout, Ctrl-C or SIGTERM during startup: nothing may survive.
        _terminate(proc, grace, host, port)
        reaper.unregister(proc.pid)
        remove_state(name, state_dir)
        if isinstance(exc, LaunchError):
            exc.pid = proc.pid
        raise
    if persist:
        reaper.unregister(proc.pid)
    logger.info("%s ready at %s in %.1fs (rss %d bytes)", recipe.id, url, ready_s, rss)
    return LaunchedTarget(
        name=name, recipe_id=recipe.id, url=url, host=host, port=port, pid=proc.pid,
        pgid=proc.pid, log_path=log_path, command=argv, started_at=started_at,
        time_to_ready_s=ready_s, startup_rss_bytes=rss, grace_s=grace,
    )  # fmt: skip


def _wait_ready(
    recipe: LaunchRecipe,
    proc: "subprocess.Popen[bytes]",
    url: str,
    start: float,
    argv: tuple[str, ...],
    log_path: Path,
) -> None:
    deadline = start + recipe.readiness.timeout_s
    health = url + recipe.readiness.path
    while True:
        code = proc.poll()
        if code is not None:
            raise LaunchError(
                f"{recipe.id}: server exited with code {code} during startup"
                f" after {time.monotonic() - start:.1f}s",
                reason="exited", recipe_id=recipe.id, command=argv, exit_code=code,
                elapsed_s=time.monotonic() - start, log_path=log_path,
                log_tail=log_tail(log_path),
            )  # fmt: skip
        remaining = deadline - time.monotonic()
        if is_ready(health, timeout_s=max(0.2, min(2.0, remaining))):
            return
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise LaunchError(
                f"{recipe.id}: {health} not ready within {recipe.readiness.timeout_s:g}s",
                reason="timeout", recipe_id=recipe.id, command=argv,
                elapsed_s=time.monotonic() - start, log_path=log_path,
                log_tail=log_tail(log_path),
            )  # fmt: skip
        time.sleep(min(recipe.readiness.interval_s, remaining))


def _terminate(proc: "subprocess.Popen[bytes]", grace_s: float, host: str, port: int) -> bool:
    killed = terminate_tree(proc.pid, proc.pid, grace_s)
    try:
        proc.wait(timeout=5)
        _children.pop(proc.pid, None)
    except subprocess.TimeoutExpired:
        logger.error("pid %d did not exit after SIGKILL", proc.pid)
    watchdog.stop(proc.pid)
    _wait_port_released(host, port)
    return killed


def _wait_port_released(host: str, port: int, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while port_in_use(host, port):
        if time.monotonic() > deadline:
            logger.warning("port %d on %s still in use after the server stopped", port, host)
            return
        time.sleep(0.05)


def stop(target: LaunchedTarget | TargetState, *, grace_s: float | None = None,
         state_dir: Path | None = None) -> bool:  # fmt: skip
    """Stop a target (this process's or another invocation's); True if SIGKILL was needed."""
    grace = grace_s if grace_s is not None else target.grace_s
    killed = False
    child = _children.get(target.pid)
    if child is not None:
        killed = _terminate(child, grace, target.host, target.port)
    elif isinstance(target, TargetState) and not target.alive():
        pass  # gone already (or the pid now belongs to someone else): never signal it
    else:
        killed = terminate_tree(target.pid, target.pgid, grace)
        _wait_port_released(target.host, target.port)
    reaper.unregister(target.pid)
    remove_state(target.name, state_dir)
    return killed


@contextmanager
def launched(recipe: LaunchRecipe, **options: Unpack[LaunchOptions]) -> Iterator[LaunchedTarget]:
    """``with launched(recipe) as target:`` -- the server is stopped however the block ends."""
    target = launch(recipe, **options)
    try:
        yield target
    finally:
        stop(target, state_dir=options.get("state_dir"))


def probe_startup(recipe: LaunchRecipe, **options: Unpack[LaunchOptions]) -> StartupOutcome:
    """Try to start ``recipe`` and stop it again; the outcome says whether it behaved as declared.

    Raises LaunchError only for failures that say nothing about the recipe (port in use, name
    taken, command not found).
    """
    try:
        target = launch(recipe, **options)
    except LaunchError as exc:
        if exc.reason not in ("exited", "timeout"):
            raise
        return StartupOutcome(
            recipe_id=recipe.id, expected=recipe.expect, became_ready=False, reason=exc.reason,
            exit_code=exc.exit_code, elapsed_s=exc.elapsed_s, log_path=exc.log_path,
            log_tail=exc.log_tail, command=exc.command,
            expected_error_matched=search_log(exc.log_path, recipe.expected_error),
        )  # fmt: skip
    stop(target, state_dir=options.get("state_dir"))
    return StartupOutcome(
        recipe_id=recipe.id, expected=recipe.expect, became_ready=True, reason="ready",
        exit_code=None, elapsed_s=target.time_to_ready_s, log_path=target.log_path,
        log_tail=log_tail(target.log_path), command=target.command,
        expected_error_matched=search_log(target.log_path, recipe.expected_error),
    )  # fmt: skip
