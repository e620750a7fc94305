"""Servers shared by the whole session: one per launch recipe, for the live tests that only read.

A start-up of the embedded target costs 25-45 s on a 2-core host, most of the live suite's time,
and most live tests only send requests a server answers the same way whoever asked before
(contract probes, field effects, reference parity, serving, stage timings). So the pool keeps one
server per launch key (recipe id plus overrides), started on first use through omniqual's own
launcher, under a private TMPDIR (``temp_dir``) and from the session's one checkpoint cache.

Before each handout the server is checked (its process alive, its readiness path answering 200)
and restarted when it is not; a test that raises while it holds a server gets that server
stopped, so a doubtful server is never handed to the next test. Tests that need a fresh
process (fatal faults, doctored checkpoints, start-up gates, fresh-launch measurements, aborts
that may leave the server unhealthy) keep launching their own.

An idle server is not free (measured: about 7 % of one core and 1 GB each), so the pool keeps
none longer than needed. A module that borrows says which launch keys it borrows
(``SHARED_SERVERS``); within each track such modules run first, back to back, and a server is
stopped once the last test of the session that declared its key is done. The declarations only
plan: an undeclared borrow still gets its server, kept until the cap or the session's end. At
most ``max_alive`` servers live at once: beyond that the least recently used idle one stops.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TypeVar

import psutil

from omniqual.deploy.launcher import LaunchedTarget, launch, stop
from omniqual.deploy.readiness import is_ready
from omniqual.domain.recipe import LaunchRecipe, apply_overrides
from tests.integration.embedded.live_census import SHARED, charged_to

MAX_ALIVE = 6
"""The bundled pipelines are six, and the two modules that read from them all (api-contract,
serving) walk them in the same order: a cap below six would make least-recently-used eviction
stop each server just before its next use. Six idle tiny servers hold about 6 GB."""

DECLARATION = "SHARED_SERVERS"
"""A test module's list of the launch keys its tests borrow: recipe ids, or LaunchKeys."""

HEALTH_TIMEOUT_S = 5.0


@dataclass(frozen=True, slots=True, order=True)
class LaunchKey:
    """One launch recipe: its id and the overrides applied to it (``flags.x=y``)."""

    recipe_id: str
    overrides: tuple[str, ...] = ()

    @property
    def slug(self) -> str:
        if not self.overrides:
            return self.recipe_id
        extra = "-".join(o.split("=", 1)[0].split(".")[-1] for o in self.overrides)
        return f"{self.recipe_id}.{extra}"


@dataclass(frozen=True, slots=True)
class SharedServer:
    """A running server of the pool, with what the tests read of a launched target."""

    key: LaunchKey
    target: LaunchedTarget
    recipe: LaunchRecipe
    checkpoint: Path | None
    """The ``{model}`` it serves (an embedded recipe's built checkpoint)."""
    temp_dir: Path
    """The server's TMPDIR: only this server writes there."""

    @property
    def url(self) -> str:
        return self.target.url

    @property
    def base_url(self) -> str:
        return self.target.url

    @property
    def pid(self) -> int:
        return self.target.pid

    @property
    def recipe_id(self) -> str:
        return self.target.recipe_id

    @property
    def log_path(self) -> Path:
        return self.target.log_path

    @property
    def ready_s(self) -> float:
        return self.target.time_to_ready_s


def process_alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


class SharedServers:
    """The session's pool of servers by launch key (the ``shared_servers`` fixture)."""

    def __init__(self, root: Path, recipe_of: Callable[[str], LaunchRecipe],
                 model_of: Callable[[LaunchRecipe], Path | None],
                 max_alive: int = MAX_ALIVE) -> None:  # fmt: skip
        self.root = root
        self.recipe_of = recipe_of
        self.model_of = model_of
        self.max_alive = max_alive
        self.started = 0
        self._alive: OrderedDict[LaunchKey, SharedServer] = OrderedDict()  # least recent first
        self._held: dict[LaunchKey, int] = {}
        self._doubtful: set[LaunchKey] = set()
        self._launches = itertools.count(1)
        self._last_use: dict[LaunchKey, str] = {}

    def plan(self, last_use: Mapping[LaunchKey, str]) -> None:
        """The test (node id) after which each declared key's server is no longer needed."""
        self._last_use = dict(last_use)

    def finished(self, nodeid: str) -> list[LaunchKey]:
        """``nodeid`` is done (teardown included): stop the idle servers it was the last user of."""
        done = [k for k, last in self._last_use.items() if last == nodeid]
        stopped = [k for k in done if k in self._alive and not self._held.get(k)]
        for key in stopped:
            self.stop(key)
        return stopped

    def alive(self) -> list[LaunchKey]:
        return list(self._alive)

    @contextmanager
    def borrow(self, recipe_id: str, *overrides: str) -> Iterator[SharedServer]:
        """A healthy server of ``recipe_id`` (with ``overrides``), started if need be; stopped
        when the block raises (the test may have left it in a state nobody should inherit)."""
        key = LaunchKey(recipe_id, tuple(overrides))
        server = self._healthy(key)
        self._held[key] = self._held.get(key, 0) + 1
        try:
            yield server
        except BaseException:
            self._doubtful.add(key)
            raise
        finally:
            self._held[key] -= 1
            if key in self._doubtful and not self._held[key]:
                self._doubtful.discard(key)
                self.stop(key)  # once no other test holds it
            elif key in self._alive:
                self._alive.move_to_end(key)

    def stop(self, key: LaunchKey) -> None:
        server = self._alive.pop(key, None)
        if server is not None:
            stop(server.target, state_dir=self.root / "state")

    def stop_idle(self) -> None:
        """Stop every server no test holds now (before a test that measures the host)."""
        for key in [k for k in self._alive if not self._held.get(k)]:
            self.stop(key)

    def stop_all(self) -> None:
        for key in list(self._alive):
            self.stop(key)

    def _healthy(self, key: LaunchKey) -> SharedServer:
        server = self._alive.get(key)
        if server is not None:
            health = server.url + server.recipe.readiness.path
            if process_alive(server.pid) and is_ready(health, timeout_s=HEALTH_TIMEOUT_S):
                self._alive.move_to_end(key)
                return server
            self.stop(key)  # died or stopped answering: a fresh one replaces it
        self._make_room()
        server = self._start(key)
        self._alive[key] = server
        return server

    def _make_room(self) -> None:
        idle = [k for k in self._alive if not self._held.get(k)]
        while len(self._alive) >= self.max_alive and idle:
            self.stop(idle.pop(0))

    def _start(self, key: LaunchKey) -> SharedServer:
        recipe = self.recipe_of(key.recipe_id)
        if key.overrides:
            recipe = apply_overrides(recipe, list(key.overrides))
        model = self.model_of(recipe)
        name = f"shared-{key.slug}-{next(self._launches)}"  # unique: a target state's name
        home = self.root / name
        temp_dir = home / "server-tmp"
        temp_dir.mkdir(parents=True)
        with charged_to(SHARED):
            target = launch(recipe, name=name,
                            model=None if model is None else str(model),
                            log_path=home / "server.log", state_dir=self.root / "state",
                            extra_env={"TMPDIR": str(temp_dir)})  # fmt: skip
        self.started += 1
        return SharedServer(key, target, recipe, model, temp_dir)


T = TypeVar("T")


def declared_keys(module: ModuleType | None) -> tuple[LaunchKey, ...]:
    """The launch keys ``module`` says its tests borrow (``SHARED_SERVERS``)."""
    given: Iterable[str | LaunchKey] = getattr(module, DECLARATION, ())
    return tuple(k if isinstance(k, LaunchKey) else LaunchKey(k) for k in given)


def borrowers_first(items: Sequence[T], track_of: Callable[[T], object],
                    borrows: Callable[[T], bool]) -> list[T]:  # fmt: skip
    """Within each run of consecutive items of one track, those that borrow shared servers come
    first, in their order, then the rest in theirs: the borrowers reuse one another's servers
    back to back, and the others run with none idling beside them."""
    ordered: list[T] = []
    run: list[T] = []
    for item in items:
        if run and track_of(item) != track_of(run[-1]):
            ordered += sorted(run, key=lambda i: not borrows(i))
            run = []
        run.append(item)
    return ordered + sorted(run, key=lambda i: not borrows(i))


def last_uses(items: Iterable[T], keys_of: Callable[[T], Iterable[LaunchKey]],
              nodeid_of: Callable[[T], str]) -> dict[LaunchKey, str]:  # fmt: skip
    """Each declared key's last user among ``items`` (in run order)."""
    last: dict[LaunchKey, str] = {}
    for item in items:
        for key in keys_of(item):
            last[key] = nodeid_of(item)
    return last
