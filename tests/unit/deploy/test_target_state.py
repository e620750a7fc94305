"""Target state files: round trip, listing, pid-reuse safety, OMNIQUAL_HOME."""

import os
from datetime import UTC, datetime
from pathlib import Path

import psutil
import pytest

from omniqual.deploy.state import (
    TargetState,
    list_states,
    omniqual_home,
    read_state,
    remove_state,
    targets_dir,
    write_state,
)


def state(name: str = "sd3-tiny", **fields: object) -> TargetState:
    me = psutil.Process(os.getpid())
    data: dict[str, object] = {
        "name": name, "recipe_id": "sd3-tiny", "pid": me.pid, "pgid": os.getpgid(me.pid),
        "create_time": me.create_time(), "host": "127.0.0.1", "port": 8000,
        "url": "http://127.0.0.1:8000", "log_path": "/tmp/x.log", "command": ["vllm", "serve"],
        "started_at": datetime(2025, 1, 1, tzinfo=UTC),
    }  # fmt: skip
    data.update(fields)
    return TargetState.model_validate(data)


def test_home_defaults_and_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OMNIQUAL_HOME", raising=False)
    assert omniqual_home() == Path.home() / ".cache" / "omniqual"
    monkeypatch.setenv("OMNIQUAL_HOME", "/srv/oq")
    assert targets_dir() == Path("/srv/oq/targets")


def test_round_trip_list_and_remove(tmp_path: Path) -> None:
    path = write_state(state(), tmp_path)
    write_state(state("other", port=8001), tmp_path)
    assert path == tmp_path / "sd3-tiny.json"
    assert read_state("sd3-tiny", tmp_path) == state()
    assert [s.name for s in list_states(tmp_path)] == ["other", "sd3-tiny"]
    remove_state("sd3-tiny", tmp_path)
    remove_state("sd3-tiny", tmp_path)  # idempotent
    assert read_state("sd3-tiny", tmp_path) is None
    assert not list(tmp_path.glob("*.tmp"))


def test_unreadable_state_is_ignored(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text("{not json")
    assert read_state("broken", tmp_path) is None
    assert list_states(tmp_path) == []
    assert list_states(tmp_path / "missing") == []


def test_alive_checks_the_process_identity() -> None:
    assert state().alive()
    assert not state(create_time=state().create_time - 100).alive()  # a recycled pid
    assert not state(pid=2**22 + 12345).alive()


def test_names_are_restricted() -> None:
    with pytest.raises(ValueError):
        state("../escape")


def test_orphaned_means_a_recorded_owner_that_is_gone() -> None:
    me = psutil.Process(os.getpid())
    assert not state().orphaned()  # no owner recorded: a persistent `target up`
    assert not state(owner_pid=me.pid, owner_create_time=me.create_time()).orphaned()
    assert state(owner_pid=2**22 + 12345, owner_create_time=1.0).orphaned()
    # The owner's pid now belongs to another process: the owner is gone all the same.
    assert state(owner_pid=me.pid, owner_create_time=me.create_time() - 100).orphaned()


def test_reap_orphans_leaves_live_owners_and_persistent_targets_alone(tmp_path: Path) -> None:
    from omniqual.deploy.reaper import Reaped, reap_orphans

    me = psutil.Process(os.getpid())
    write_state(state("mine", owner_pid=me.pid, owner_create_time=me.create_time()), tmp_path)
    write_state(state("kept"), tmp_path)
    # A dead owner's record whose server is gone too (pid never used): only the record goes.
    dead = state("dead", pid=2**22 + 12345, pgid=2**22 + 12345, create_time=1.0,
                 owner_pid=2**22 + 12346, owner_create_time=1.0)  # fmt: skip
    write_state(dead, tmp_path)
    assert reap_orphans(tmp_path) == (
        Reaped("dead", 2**22 + 12345, dead.url, 2**22 + 12346, was_running=False),
    )
    assert [s.name for s in list_states(tmp_path)] == ["kept", "mine"]
