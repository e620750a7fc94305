"""The launcher against real processes: readiness, early death, timeouts, stubborn servers."""

import json
import socket
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

from omniqual.deploy.launcher import (
    LaunchError,
    LaunchOptions,
    launch,
    launched,
    probe_startup,
    stop,
)
from omniqual.deploy.ports import port_in_use
from omniqual.deploy.state import read_state

pytestmark = pytest.mark.integration


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_healthy_server_is_ready_then_fully_stopped(fake_recipe, options: LaunchOptions) -> None:
    recipe = fake_recipe("healthy")
    with launched(recipe, **options) as target:
        with urllib.request.urlopen(target.url + "/health", timeout=5) as reply:
            assert json.loads(reply.read()) == {"status": "healthy"}
        assert target.time_to_ready_s >= 0.2  # the fake waits 0.2 s before binding
        assert target.startup_rss_bytes > 5 * 2**20  # a Python interpreter at least
        assert target.command[-2:] == ("--mode", "healthy")
        assert str(target.port) in target.command
        state = read_state(target.name, options["state_dir"])
        assert state is not None and state.pid == target.pid and state.alive()
        assert state.time_to_ready_s == pytest.approx(target.time_to_ready_s)
    assert gone(target.pid)
    assert not port_in_use(target.host, target.port)
    assert read_state(target.name, options["state_dir"]) is None
    log = target.log_path.read_text()
    assert "# omniqual launch fake-healthy" in log and "request /health" in log


def test_early_death_gives_exit_code_and_log_tail(fake_recipe, options: LaunchOptions) -> None:
    with pytest.raises(LaunchError) as caught:
        launch(fake_recipe("die"), **options)
    error = caught.value
    assert error.reason == "exited"
    assert error.exit_code == 7
    assert len(error.log_tail) == 20
    assert error.log_tail[-1] == "ValueError: --bogus-flag is not supported on this platform"
    assert "exited with code 7" in str(error)
    assert error.pid is not None and gone(error.pid)
    assert read_state("fake-die", options["state_dir"]) is None


def test_readiness_timeout_kills_the_server(fake_recipe, options: LaunchOptions) -> None:
    recipe = fake_recipe("never-ready", readiness={"timeout_s": 1.5, "interval_s": 0.1})
    start = time.monotonic()
    with pytest.raises(LaunchError) as caught:
        launch(recipe, **options)
    assert caught.value.reason == "timeout"
    assert 1.5 <= caught.value.elapsed_s < 10
    assert time.monotonic() - start < 15
    assert caught.value.pid is not None and gone(caught.value.pid)
    assert any("listening on" in line for line in caught.value.log_tail)


def test_sigterm_ignoring_server_is_killed_after_grace(fake_recipe, options) -> None:
    recipe = fake_recipe("ignore-term", stop={"grace_s": 0.5})
    target = launch(recipe, **options)
    start = time.monotonic()
    killed = stop(target, state_dir=options["state_dir"])
    elapsed = time.monotonic() - start
    assert killed is True
    assert elapsed >= 0.5
    assert gone(target.pid)
    assert not port_in_use(target.host, target.port)


def test_children_of_the_server_are_stopped_too(fake_recipe, options) -> None:
    with launched(fake_recipe("with-child"), **options) as target:
        deadline = time.monotonic() + 5
        while not psutil.Process(target.pid).children() and time.monotonic() < deadline:
            time.sleep(0.05)
        children = [c.pid for c in psutil.Process(target.pid).children(recursive=True)]
        assert children
    assert all(gone(pid) for pid in children)


def test_given_port_in_use_is_a_clear_error(fake_recipe, options) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(LaunchError) as caught:
            launch(fake_recipe("healthy"), **{**options, "port": port})
    assert caught.value.reason == "port-in-use"
    assert f"port {port}" in str(caught.value)
    assert caught.value.pid is None  # nothing was started


def test_given_free_port_is_used(fake_recipe, options) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with launched(fake_recipe("healthy"), **{**options, "port": port}) as target:
        assert target.port == port and target.url.endswith(f":{port}")


def test_missing_command_is_a_spawn_failure(fake_recipe, options) -> None:
    recipe = fake_recipe("healthy", command=["/nonexistent/omniqual-no-such-binary"])
    with pytest.raises(LaunchError) as caught:
        launch(recipe, **options)
    assert caught.value.reason == "spawn-failed"


def test_interrupt_inside_the_block_still_stops(fake_recipe, options) -> None:
    with pytest.raises(KeyboardInterrupt), launched(fake_recipe("healthy"), **options) as target:
        raise KeyboardInterrupt
    assert gone(target.pid)
    assert not port_in_use(target.host, target.port)


def test_same_name_twice_is_refused(fake_recipe, options, tmp_path: Path) -> None:
    first = launch(fake_recipe("healthy"), **{**options, "persist": True})
    try:
        with pytest.raises(LaunchError) as caught:
            launch(fake_recipe("healthy"), **{**options, "log_path": tmp_path / "b.log"})
        assert caught.value.reason == "already-running"
        assert "target down fake-healthy" in str(caught.value)
    finally:
        stop(first, state_dir=options["state_dir"])
    assert gone(first.pid)


def test_probe_of_an_expected_rejection(fake_recipe, options) -> None:
    recipe = fake_recipe("die", expect="rejects", expected_error=r"--bogus-flag is not supported")
    outcome = probe_startup(recipe, **options)
    assert not outcome.became_ready and outcome.reason == "exited" and outcome.exit_code == 7
    assert outcome.expected_error_matched is True and outcome.as_expected
    assert outcome.log_path is not None and outcome.log_path.is_file()
    assert outcome.log_tail[-1].startswith("ValueError: --bogus-flag")


def test_probe_of_a_rejection_for_another_reason(fake_recipe, options) -> None:
    recipe = fake_recipe("die", expect="rejects", expected_error=r"requires an accelerator")
    outcome = probe_startup(recipe, **options)
    assert outcome.expected_error_matched is False and not outcome.as_expected


def test_probe_of_a_server_expected_to_refuse_but_serving(fake_recipe, options) -> None:
    recipe = fake_recipe("healthy", expect="rejects", expected_error="never")
    outcome = probe_startup(recipe, **options)
    assert outcome.became_ready and outcome.reason == "ready" and not outcome.as_expected
    assert read_state(recipe.id, options["state_dir"]) is None  # it was stopped again
    assert outcome.elapsed_s > 0
