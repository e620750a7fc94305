"""Targets across omniqual processes: cleanup when omniqual is killed; `target up` persistence."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from omniqual.deploy.launcher import stop
from omniqual.deploy.ports import port_in_use
from omniqual.deploy.state import list_states, read_state

pytestmark = pytest.mark.integration

DRIVER = """
import json, os, signal, sys, time
from pathlib import Path
from omniqual.deploy.launcher import launch
from omniqual.domain.recipe import LaunchRecipe

recipe = LaunchRecipe.model_validate_json(sys.argv[1])
state_dir, persist, handler = Path(sys.argv[2]), sys.argv[3] == "1", sys.argv[4]
if handler == "custom":
    def on_term(signum, frame):
        print(json.dumps({"custom_handler": True}), flush=True)
        sys.exit(42)
    signal.signal(signal.SIGTERM, on_term)
if handler == "thread":  # the async engine's shape: launch in a worker thread
    import concurrent.futures
    from omniqual.deploy import reaper
    reaper.install_signal_handlers()
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        target = pool.submit(launch, recipe, state_dir=state_dir, persist=persist).result()
else:
    target = launch(recipe, state_dir=state_dir, persist=persist)
print(json.dumps({"pid": target.pid, "port": target.port}), flush=True)
if handler != "exit":
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(30)
"""


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def drive(recipe, state_dir: Path, *, persist: bool, handler: str) -> tuple[int, list[dict]]:
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, recipe.model_dump_json(), str(state_dir),
         "1" if persist else "0", handler],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, done.stderr
    return done.returncode, lines


def test_sigterm_to_omniqual_stops_the_server(fake_recipe, tmp_path: Path) -> None:
    code, lines = drive(fake_recipe("healthy"), tmp_path, persist=False, handler="default")
    assert code == -signal.SIGTERM  # the default action still happens after cleanup
    assert gone(lines[0]["pid"])
    assert not port_in_use("127.0.0.1", lines[0]["port"])
    assert list_states(tmp_path) == []


def test_sigterm_stops_servers_launched_from_worker_threads(fake_recipe, tmp_path: Path) -> None:
    code, lines = drive(fake_recipe("healthy"), tmp_path, persist=False, handler="thread")
    assert code == -signal.SIGTERM
    assert gone(lines[0]["pid"])
    assert list_states(tmp_path) == []


def test_callers_sigterm_handler_still_runs_after_cleanup(fake_recipe, tmp_path: Path) -> None:
    code, lines = drive(fake_recipe("healthy"), tmp_path, persist=False, handler="custom")
    assert code == 42
    assert {"custom_handler": True} in lines
    assert gone(lines[0]["pid"])


def test_normal_exit_stops_a_non_persistent_server(fake_recipe, tmp_path: Path) -> None:
    code, lines = drive(fake_recipe("healthy"), tmp_path, persist=False, handler="exit")
    assert code == 0
    assert gone(lines[0]["pid"])


def test_persistent_server_outlives_omniqual_and_stops_from_state(
    fake_recipe, tmp_path: Path
) -> None:
    code, lines = drive(fake_recipe("healthy"), tmp_path, persist=True, handler="exit")
    assert code == 0
    pid = lines[0]["pid"]
    try:
        state = read_state("fake-healthy", tmp_path)
        assert state is not None and state.pid == pid and state.alive()
        assert port_in_use("127.0.0.1", state.port)
        assert stop(state, state_dir=tmp_path) is False
        deadline = time.monotonic() + 5
        while not gone(pid) and time.monotonic() < deadline:
            time.sleep(0.05)  # not our child: init reaps it
        assert gone(pid)
        assert not port_in_use("127.0.0.1", state.port)
        assert read_state("fake-healthy", tmp_path) is None
    finally:
        if not gone(pid):
            os.killpg(pid, signal.SIGKILL)
