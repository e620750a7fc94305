"""The session's shared servers and its census, with fake servers (no vLLM): one start-up per
launch key, a dead or silent server replaced before handout, a server a failing test held
stopped, at most ``max_alive`` alive (least recently used idle first); every ``vllm serve
--omni`` start-up and every checkpoint build counted; one checkpoint cache for fixtures and
engine alike, rid of checkpoints other library versions wrote; borrowers run first in their
track and a server stops after its last declared user."""

from __future__ import annotations

import logging
import os
import signal
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import psutil
import pytest

from omniqual.deploy.embedded.manifest import CheckpointManifest, write_manifest
from omniqual.deploy.state import omniqual_home
from omniqual.domain.recipe import LaunchRecipe
from tests.integration.deploy.conftest import fake_command
from tests.integration.embedded.checkpoint_cache import drop_other_library_builds, installed_version
from tests.integration.embedded.live_census import (
    BUILT,
    CATALOG_LOGGER,
    LiveCensus,
    charged_to,
    restore,
    vllm_serve_label,
)
from tests.integration.embedded.shared_servers import (
    LaunchKey,
    SharedServers,
    borrowers_first,
    declared_keys,
    last_uses,
    process_alive,
)

pytestmark = pytest.mark.integration


def fake(recipe_id: str, mode: str = "healthy") -> LaunchRecipe:
    return LaunchRecipe.model_validate({
        "id": recipe_id, "description": "a fake server", "kind": "command",
        "command": fake_command(mode), "readiness": {"timeout_s": 20, "interval_s": 0.05},
        "stop": {"grace_s": 2},
    })  # fmt: skip


@pytest.fixture
def pool(tmp_path: Path) -> Iterator[SharedServers]:
    made = SharedServers(tmp_path / "pool", fake, lambda recipe: None, max_alive=2)
    yield made
    made.stop_all()


def test_a_recipe_starts_once_and_is_handed_out_again(pool: SharedServers) -> None:
    with pool.borrow("a") as first:
        assert first.temp_dir.is_dir() and first.checkpoint is None
    with pool.borrow("a") as again:
        assert again.pid == first.pid
    assert pool.started == 1 and pool.alive() == [LaunchKey("a")]


def test_a_dead_server_is_replaced_before_handout(pool: SharedServers) -> None:
    with pool.borrow("a") as first:
        pass
    os.killpg(first.pid, signal.SIGKILL)
    psutil.Process(first.pid).wait(10)
    with pool.borrow("a") as again:
        assert again.pid != first.pid and process_alive(again.pid)
    assert pool.started == 2


def test_a_server_that_stops_answering_is_replaced(pool: SharedServers) -> None:
    with pool.borrow("a") as first:
        pass
    os.kill(first.pid, signal.SIGSTOP)  # alive, but its health check times out
    try:
        with pool.borrow("a") as again:
            assert again.pid != first.pid
    finally:
        if process_alive(first.pid):
            os.kill(first.pid, signal.SIGKILL)
    assert not process_alive(first.pid)


def test_a_server_held_by_a_failing_test_is_stopped(pool: SharedServers) -> None:
    with pytest.raises(AssertionError), pool.borrow("a") as held:
        raise AssertionError("the test failed while it held the server")
    assert pool.alive() == [] and not process_alive(held.pid)


def test_a_failing_test_never_stops_a_server_another_still_holds(pool: SharedServers) -> None:
    with pool.borrow("a") as outer:
        with pytest.raises(AssertionError), pool.borrow("a"):
            raise AssertionError("the inner user failed")
        assert process_alive(outer.pid)  # the outer user still has it
    assert pool.alive() == [] and not process_alive(outer.pid)


def test_beyond_max_alive_the_least_recently_used_idle_server_stops(pool: SharedServers) -> None:
    with pool.borrow("a") as a, pool.borrow("b") as b:
        pass
    with pool.borrow("a"):
        pass  # b is now the least recently used
    with pool.borrow("c"):
        assert sorted(pool.alive()) == [LaunchKey("a"), LaunchKey("c")]
    assert process_alive(a.pid) and not process_alive(b.pid)


def test_a_held_server_is_never_stopped_to_make_room(pool: SharedServers) -> None:
    with pool.borrow("a") as a, pool.borrow("b"), pool.borrow("c"):
        assert len(pool.alive()) == 3  # over the cap rather than take a server from a test
        pool.stop_idle()
        assert len(pool.alive()) == 3
    assert process_alive(a.pid)
    pool.stop_idle()
    assert pool.alive() == [] and not process_alive(a.pid)


def test_overrides_make_another_launch_key(pool: SharedServers) -> None:
    with pool.borrow("a") as plain, pool.borrow("a", "flags.delay=0.3") as flagged:
        assert plain.pid != flagged.pid
    assert LaunchKey("a", ("flags.delay=0.3",)).slug == "a.delay"


def test_the_census_counts_vllm_serve_start_ups_and_builds_only(tmp_path: Path) -> None:
    vllm = tmp_path / "bin" / "vllm"
    vllm.parent.mkdir()
    vllm.write_text("#!/bin/sh\nexit 0\n")
    vllm.chmod(vllm.stat().st_mode | stat.S_IXUSR)
    census = LiveCensus(tmp_path / "census.jsonl")
    replaced = census.install()
    try:
        argv = [str(vllm), "serve", "/c/sd3-tiny-abc", "--omni", "--host", "h", "--port", "1"]
        subprocess.run(argv, check=True)
        subprocess.run([str(vllm), "--version"], check=True)  # not a start-up
        with charged_to("shared pool"):
            subprocess.run([*argv, "--step-execution"], check=True)
        logging.getLogger(CATALOG_LOGGER).info(BUILT, "sd3-tiny", "/c/sd3-tiny-abc")
        logging.getLogger(CATALOG_LOGGER).info("reused %s", "sd3-tiny")  # not a build
    finally:
        restore(replaced)
    assert [(e["kind"], e["what"], e["by"]) for e in census.events] == [
        ("startup", "sd3-tiny-abc", "test"),
        ("startup", "sd3-tiny-abc --step-execution", "shared pool"),
        ("build", "sd3-tiny", "test"),
    ]
    assert len(census.path.read_text().splitlines()) == 3
    assert census.summary().startswith(
        "live census: 2 vLLM start-up(s) (1 by the shared pool), 1 checkpoint build(s)"
    )
    assert vllm_serve_label(["python", "serve", "x", "--omni"]) is None


def test_the_engine_and_the_fixtures_build_into_one_cache(checkpoint_cache: Path) -> None:
    configured = os.environ.get("OMNIQUAL_EMBEDDED_CACHE")
    if configured:
        assert checkpoint_cache == Path(configured).resolve()
    assert checkpoint_cache.is_absolute() and checkpoint_cache.is_dir()
    assert (omniqual_home() / "checkpoints").resolve() == checkpoint_cache


def test_checkpoints_other_library_versions_wrote_are_dropped(tmp_path: Path) -> None:
    def cached(name: str, pytest_version: str) -> Path:
        checkpoint = tmp_path / name
        checkpoint.mkdir()
        write_manifest(checkpoint, CheckpointManifest(
            name=name, builder_version="1", seed=0, recipe_hash="0" * 64, configs={},
            library_versions={"pytest": pytest_version, "no-such-library": "absent"}, files=[],
        ))  # fmt: skip
        return checkpoint

    cached("current", installed_version("pytest"))
    cached("older", "0.0.1")
    (tmp_path / ".staging").mkdir()  # not a checkpoint: left to the catalog
    assert drop_other_library_builds(tmp_path) == ["older"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".staging", "current"]


def test_borrowers_run_first_within_each_run_of_one_track() -> None:
    items = [("function", "contract", True), ("function", "cli", False),
             ("function", "serving", True), ("accuracy", "parity", False),
             ("accuracy", "reference", True), ("function", "late", True)]  # fmt: skip
    ordered = borrowers_first(items, lambda i: i[0], lambda i: i[2])
    # A track's run is reordered within itself, never merged with another.
    assert [name for _, name, _ in ordered] == ["contract", "serving", "cli", "reference",
                                                 "parity", "late"]  # fmt: skip


def test_a_server_stops_once_its_last_declared_user_is_done(pool: SharedServers) -> None:
    items = [("t1", ["a", "b"]), ("t2", ["a"]), ("t3", [])]
    plan = last_uses(items, lambda i: [LaunchKey(k) for k in i[1]], lambda i: i[0])
    assert plan == {LaunchKey("a"): "t2", LaunchKey("b"): "t1"}
    pool.plan(plan)
    with pool.borrow("a") as a, pool.borrow("b") as b:
        assert pool.finished("t1") == []  # b is held: a test still uses it
    assert pool.finished("t1") == [LaunchKey("b")] and not process_alive(b.pid)
    with pool.borrow("c"):  # undeclared: served all the same, kept until the cap or the end
        pass
    assert pool.finished("t2") == [LaunchKey("a")] and not process_alive(a.pid)
    assert pool.alive() == [LaunchKey("c")]


def test_modules_declare_what_they_borrow() -> None:
    module = ModuleType("m")
    module.SHARED_SERVERS = ["a", LaunchKey("a", ("flags.x=1",))]  # type: ignore[attr-defined]
    assert declared_keys(module) == (LaunchKey("a"), LaunchKey("a", ("flags.x=1",)))
    assert declared_keys(ModuleType("none")) == () and declared_keys(None) == ()
