"""An omniqual killed outright (SIGKILL: no handler, no atexit) leaves no server behind, and what
it leaves is reaped by the next command, which says so; `run --resume` then just continues."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from typer.testing import CliRunner

from omniqual.cli.main import app
from omniqual.deploy.launcher import launch, launched, stop
from omniqual.deploy.state import list_states, read_state
from omniqual.evidence.store import read_run
from tests.integration.deploy.conftest import FAKE_SERVER, RecipeFactory

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[3]
MINI_AXES = REPO / "tests" / "data" / "mini-project" / "matrices" / "axes.yaml"
CHILD = Path(__file__).with_name("omniqual_child.py")
GRACE_S = 3.0

# Launches a server (not persistent), prints its pid, then waits to be killed.
DRIVER = """
import json, sys, time
from omniqual.deploy.launcher import launch
from omniqual.domain.recipe import LaunchRecipe

target = launch(LaunchRecipe.model_validate_json(sys.argv[1]))
print(json.dumps({"pid": target.pid}), flush=True)
time.sleep(120)
"""


@pytest.fixture(autouse=True)
def _no_leftovers() -> Iterator[list[int]]:
    """Whatever a failing test left running is killed afterwards (by the pids it recorded)."""
    yield ORPHANS
    for pid in alive(ORPHANS):
        with contextlib.suppress(psutil.NoSuchProcess):
            psutil.Process(pid).kill()
    ORPHANS.clear()


ORPHANS: list[int] = []


def alive(pids: list[int]) -> list[int]:
    living = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                living.append(pid)
        except psutil.NoSuchProcess:
            continue
    return living


def server_tree(pid: int) -> list[int]:
    root = psutil.Process(pid)
    deadline = time.monotonic() + 10
    while not root.children(recursive=True) and time.monotonic() < deadline:
        time.sleep(0.05)  # the with-child server starts its child right after binding
    pids = [pid, *(child.pid for child in root.children(recursive=True))]
    ORPHANS.extend(pids)
    return pids


def wait_gone(pids: list[int], timeout_s: float) -> list[int]:
    deadline = time.monotonic() + timeout_s
    while alive(pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive(pids)


def watchdogs_of(server_pid: int) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        line = proc.info["cmdline"] or []
        if "omniqual.deploy.watchdog" in line and str(server_pid) in line:
            found.append(proc)
    return found


def orphan_a_server(recipe_json: str, *, kill_watchdog: bool) -> list[int]:
    """Launch from a driver process, SIGKILL it (and its watchdog if asked); the server's pids."""
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, recipe_json],
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert driver.stdout is not None
        pid = json.loads(driver.stdout.readline())["pid"]
        pids = server_tree(pid)
        if kill_watchdog:
            (guard,) = watchdogs_of(pid)
            guard.kill()  # the driver's child: a zombie until the driver dies below
        driver.kill()
        driver.wait(10)
    finally:
        if driver.poll() is None:
            driver.kill()
    return pids


def test_sigkill_of_omniqual_stops_the_server_and_its_children(fake_recipe: RecipeFactory) -> None:
    recipe = fake_recipe("with-child", stop={"grace_s": GRACE_S})
    pids = orphan_a_server(recipe.model_dump_json(), kill_watchdog=False)
    assert len(pids) >= 2  # the server and the child it spawned, in its process group
    assert wait_gone(pids, GRACE_S + 10) == [], "a server outlived the omniqual that launched it"
    guards = [proc.pid for proc in watchdogs_of(pids[0])]
    assert wait_gone(guards, 5) == []  # and its watchdog exits once it is done


def test_an_orphan_is_reaped_by_the_next_command_which_says_so(
    fake_recipe: RecipeFactory,
) -> None:
    recipe = fake_recipe("with-child", stop={"grace_s": GRACE_S})
    pids = orphan_a_server(recipe.model_dump_json(), kill_watchdog=True)
    assert alive(pids) == pids  # nothing stopped it: both its owner and its watchdog are gone
    result = CliRunner().invoke(app, ["target", "list"])
    assert f"stopped orphaned server fake-with-child (pid {pids[0]}, http://127.0.0.1:" in (
        result.stderr
    )
    assert "which launched it, is gone" in result.stderr
    assert alive(pids) == [] and list_states() == []


def test_launching_under_an_orphans_name_reaps_it_instead_of_refusing(
    fake_recipe: RecipeFactory,
) -> None:
    recipe = fake_recipe("healthy", stop={"grace_s": GRACE_S})
    pids = orphan_a_server(recipe.model_dump_json(), kill_watchdog=True)
    with launched(recipe) as target:  # not "already running": its owner is gone
        assert alive(pids) == [] and target.pid not in pids
        state = read_state("fake-healthy")
        assert state is not None and state.owner_pid == os.getpid()


def test_a_normal_stop_releases_the_watchdog_and_persistent_targets_have_none(
    fake_recipe: RecipeFactory,
) -> None:
    with launched(fake_recipe("healthy")) as target:
        assert len(watchdogs_of(target.pid)) == 1
    assert watchdogs_of(target.pid) == []
    kept = launch(fake_recipe("healthy", id="fake-kept"), persist=True)
    try:
        assert watchdogs_of(kept.pid) == []
        state = read_state("fake-kept")
        assert state is not None and state.owner_pid is None and not state.orphaned()
    finally:
        stop(kept)


def write_project(root: Path) -> Path:
    (root / "matrices").mkdir(parents=True)
    (root / "gates").mkdir()
    (root / "runners").mkdir()
    (root / "matrices" / "axes.yaml").write_text(MINI_AXES.read_text())
    (root / "gates" / "block.yaml").write_text("id: block\nkind: blocking\nversion: 1\n")
    command = [sys.executable, str(FAKE_SERVER), "--host", "{host}", "--port", "{port}",
               "--mode", "with-child"]  # fmt: skip
    (root / "runners" / "srv.yaml").write_text(json.dumps({
        "id": "srv", "description": "the fake server and its child", "kind": "command",
        "command": command, "readiness": {"timeout_s": 30, "interval_s": 0.05},
        "stop": {"grace_s": GRACE_S}, "row": {"model": "m", "quantization": "none",
                                              "hardware": "cpu"},
    }))  # fmt: skip
    (root / "matrices" / "m.yaml").write_text(
        "name: m\ndefaults: {hardware: cpu, model: m}\nrows:\n"
        "  - key: {task: t2i, quantization: none}\n    recipe: srv\n    requires: [block]\n"
    )
    (root / "c.yaml").write_text("name: c\nmatrix: matrices/m.yaml\nevidence: runs\n")
    return root


def test_sigkill_mid_gate_leaves_no_server_and_resume_continues(tmp_path: Path) -> None:
    project = write_project(tmp_path / "proj")
    marker = tmp_path / "marker.json"
    marker.with_suffix(".block").touch()
    env = {**os.environ, "OMNIQUAL_HOME": str(tmp_path / "home"), "PYTHONPATH": str(REPO),
           "OMNIQUAL_TEST_MARKER": str(marker)}  # fmt: skip
    argv = [sys.executable, str(CHILD), "run", "c.yaml", "-o", "out"]
    harness = subprocess.Popen(argv, cwd=project, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        while not marker.exists():
            assert harness.poll() is None, harness.communicate()[1]
            assert time.monotonic() < deadline, "the gate never started"
            time.sleep(0.05)
        pids = server_tree(json.loads(marker.read_text())["pid"])
        harness.send_signal(signal.SIGKILL)  # mid-gate, server up
        harness.wait(10)
    finally:
        if harness.poll() is None:
            harness.kill()
    assert len(pids) >= 2
    assert wait_gone(pids, GRACE_S + 10) == [], "the killed run left its server running"
    (run_dir,) = (project / "runs").iterdir()
    marker.with_suffix(".block").unlink()
    resumed = subprocess.run([*argv, "--resume", str(run_dir)], cwd=project, env=env,
                             capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    # The watchdog had stopped the server; the resume says it cleared the dead run's record.
    assert f"removed the record of run-{run_dir.name}-srv (pid {pids[0]})" in resumed.stderr
    contents = read_run(run_dir)
    assert len(contents.starts) == 2 and [r.outcome.value for r in contents.results] == ["passed"]
    assert list_states(tmp_path / "home" / "targets") == []
