"""Fixtures every integration directory shares: the live embedded target's presence, the
session's one checkpoint cache, its shared servers, and the count of start-ups and builds.

A module that needs the live target carries ``pytest.mark.usefixtures("embedded_target")``
(part of ``EMBEDDED_MARKS``); the decision itself is :mod:`embedded_presence`.

One checkpoint cache serves the session: ``$OMNIQUAL_EMBEDDED_CACHE`` (``make test`` sets it to
``.omniqual/cache/embedded``), else a directory of the session's own. The fixtures build into it
and so does the engine (``$OMNIQUAL_HOME/checkpoints`` is pointed at it for the session), so a
pipeline is built once per run, or never when the cache is current. The shared servers are
:mod:`shared_servers`: the modules that borrow them run first in their track, and each server
stops after its last declared user; a test of the performance or reliability track that does not
use them runs with none of them alive, so what it measures is its own server and an idle host.
The count of start-ups and builds ends the session's output (:mod:`live_census`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Generator, Iterator
from pathlib import Path

import pytest

from omniqual.deploy.embedded.catalog import BuiltCheckpoint
from omniqual.deploy.state import HOME_ENV
from omniqual.domain.recipe import LaunchRecipe
from tests.integration.embedded.checkpoint_cache import drop_other_library_builds
from tests.integration.embedded.embedded_presence import missing_embedded, require_embedded
from tests.integration.embedded.live_census import LiveCensus, active, set_current_test
from tests.integration.embedded.shared_servers import (
    LaunchKey,
    SharedServers,
    borrowers_first,
    declared_keys,
    last_uses,
)

ROOT = Path(__file__).resolve().parents[2]
CACHE_ENV = "OMNIQUAL_EMBEDDED_CACHE"
POOL = pytest.StashKey[SharedServers]()
PLAN = pytest.StashKey[dict[LaunchKey, str]]()


@pytest.fixture(scope="session")
def embedded_target() -> None:
    """Skip without the embedded target; fail instead where CI requires it."""
    require_embedded(missing_embedded())


@pytest.fixture(scope="session")
def checkpoint_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The one checkpoint cache of the session (absolute: a served model's identity is its
    directory's name only when the path is absolute), without checkpoints of other libraries."""
    configured = os.environ.get(CACHE_ENV)
    cache = Path(configured) if configured else tmp_path_factory.mktemp("embedded-checkpoints")
    cache = cache.resolve()
    cache.mkdir(parents=True, exist_ok=True)
    drop_other_library_builds(cache)
    return cache


@pytest.fixture(scope="session", autouse=True)
def engine_builds_into_the_cache(
    checkpoint_cache: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    """The engine builds into ``$OMNIQUAL_HOME/checkpoints``: for the session that is the shared
    cache, in a home of the session's own (its target state and logs stay out of the user's,
    whatever ``$OMNIQUAL_HOME`` says; tests that need another home set their own)."""
    home = tmp_path_factory.mktemp("omniqual-home")
    (home / "checkpoints").symlink_to(checkpoint_cache, target_is_directory=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(HOME_ENV, str(home))
        yield home


@pytest.fixture(scope="session")
def checkpoints(checkpoint_cache: Path) -> Callable[[str], BuiltCheckpoint]:
    """Build (or reuse) a bundled checkpoint by catalog name, once per session."""
    from omniqual.deploy.embedded.catalog import build_checkpoint

    done: dict[str, BuiltCheckpoint] = {}

    def get(name: str) -> BuiltCheckpoint:
        if name not in done:
            done[name] = build_checkpoint(name, checkpoint_cache)
        return done[name]

    return get


@pytest.fixture(scope="session")
def shared_servers(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    checkpoints: Callable[[str], BuiltCheckpoint],
    embedded_target: None,
) -> Iterator[SharedServers]:
    """One server per launch recipe for the session, started on first use (shared_servers.py)."""
    from omniqual.specs.recipes import load_recipes

    book = load_recipes(ROOT / "runners")

    def recipe_of(recipe_id: str) -> LaunchRecipe:
        return book[recipe_id].recipe

    def model_of(recipe: LaunchRecipe) -> Path | None:
        return None if recipe.pipeline is None else Path(checkpoints(recipe.pipeline).path)

    pool = SharedServers(tmp_path_factory.mktemp("shared-servers"), recipe_of, model_of)
    planned: dict[LaunchKey, str] = request.config.stash.get(PLAN, {})  # none: the cap only
    pool.plan(planned)
    request.config.stash[POOL] = pool
    try:
        yield pool
    finally:
        pool.stop_all()
        del request.config.stash[POOL]


@pytest.fixture(autouse=True)
def quiet_host_for_measurements(request: pytest.FixtureRequest) -> None:
    """A test that measures time or memory (marked ``alone``, tests/conftest.py) and does not
    use the shared servers runs with none of them alive: an idle server costs little CPU, but
    "little" is not "none" on 2 cores."""
    pool = request.config.stash.get(POOL, None)
    if pool is None or "shared_servers" in request.fixturenames:
        return
    if request.node.get_closest_marker("alone"):
        pool.stop_idle()


@pytest.fixture(scope="session", autouse=True)
def live_census(checkpoint_cache: Path) -> LiveCensus:
    """Counts the session's vLLM start-ups and checkpoint builds (embedded/live_census.py),
    into a file next to the checkpoint cache."""
    stamp = time.strftime("%Y%m%dT%H%M%S")
    census = LiveCensus(checkpoint_cache.parent / "live-census" / f"{stamp}-{os.getpid()}.jsonl")
    census.install()
    return census


def _borrowed(item: pytest.Item) -> tuple[LaunchKey, ...]:
    return declared_keys(getattr(item, "module", None))


def _track(item: pytest.Item) -> str | None:
    from tests.conftest import TRACKS

    return next((name for name in TRACKS if item.get_closest_marker(name)), None)


@pytest.hookimpl(trylast=True)  # after the tracks are ordered and -m/-k deselected
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules that borrow shared servers run first in their track (shared_servers.py)."""
    items[:] = borrowers_first(items, _track, lambda item: bool(_borrowed(item)))


def pytest_collection_finish(session: pytest.Session) -> None:
    session.config.stash[PLAN] = last_uses(session.items, _borrowed, lambda item: item.nodeid)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    set_current_test(item.nodeid)
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    yield
    pool = item.config.stash.get(POOL, None)
    if pool is not None:
        pool.finished(item.nodeid)  # its module's fixtures are down: a last user lets go


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In a pytest-xdist worker: hand the census summary to the controller, which prints it
    (tests/conftest.py: the controller collects nothing, so it never loads this file)."""
    census = active()
    workeroutput = getattr(session.config, "workeroutput", None)
    if census is not None and workeroutput is not None:
        workeroutput["live_census"] = census.summary()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    census = active()
    if census is not None:
        terminalreporter.write_line(census.summary())
