"""G0-30 after DELETE: a finished async job's content route answers 404 and the file the server
stored for it is gone from the storage directory the gate watches. Either left behind fails the
gate, named; a storage the gate cannot watch leaves the check undone (invalid), never passed."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import GateRun, run_gate
from served_fake import ServedFake, ServedScript

from omniqual.checks.api_contract.lifecycle import storage_dirs_for
from omniqual.domain.outcomes import GateOutcome
from tests.fakes import FakeConfig

CASE = "videos-async/lifecycle/delete"


@pytest.fixture
def storage(tmp_path: Path) -> Path:
    path = tmp_path / "storage"
    path.mkdir()
    return path


def _run(config: FakeConfig, script: ServedScript, **params: object) -> GateRun:
    return run_gate(ServedFake(config, script), api_modes=["videos-async"], parity=False,
                    temp_dirs=[str(config.temp_dir)], **params)  # fmt: skip


def _case(run: GateRun) -> object:
    return {c.id: c for c in run.outcome.cases}[CASE]


def _reasons(run: GateRun) -> str:
    return "\n".join(run.outcome.reasons)


def test_deleted_job_is_gone_from_content_and_storage(
    fake_config: FakeConfig, storage: Path
) -> None:
    run = _run(fake_config, ServedScript(storage_dir=storage), storage_dirs=[str(storage)])
    assert run.outcome.outcome is GateOutcome.PASSED, _reasons(run)
    assert _case(run).outcome is GateOutcome.PASSED  # type: ignore[attr-defined]
    assert list(storage.iterdir()) == []


def test_stored_file_left_after_delete_fails_naming_it(
    fake_config: FakeConfig, storage: Path
) -> None:
    script = ServedScript(storage_dir=storage, keeps_stored_file=True)
    run = _run(fake_config, script, storage_dirs=[str(storage)])
    assert run.outcome.outcome is GateOutcome.FAILED
    text = _reasons(run)
    assert "stored_file_after_delete" in text and str(storage) in text, text
    assert _case(run).outcome is GateOutcome.FAILED  # type: ignore[attr-defined]


def test_content_still_served_after_delete_fails(fake_config: FakeConfig, storage: Path) -> None:
    script = ServedScript(storage_dir=storage, serves_deleted_content=True)
    run = _run(fake_config, script, storage_dirs=[str(storage)])
    assert run.outcome.outcome is GateOutcome.FAILED
    text = _reasons(run)
    assert "content_after_delete" in text and "answered HTTP 200" in text, text


def test_no_storage_to_watch_is_invalid(fake_config: FakeConfig, storage: Path) -> None:
    run = _run(fake_config, ServedScript(storage_dir=storage))
    assert run.outcome.outcome is GateOutcome.INVALID
    assert f"{CASE} not checked" in _reasons(run) and "storage" in _reasons(run)
    assert _case(run).outcome is GateOutcome.SKIPPED  # type: ignore[attr-defined]


def test_a_job_file_never_seen_in_the_watched_storage_is_invalid(
    fake_config: FakeConfig, storage: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run = _run(fake_config, ServedScript(storage_dir=elsewhere), storage_dirs=[str(storage)])
    assert run.outcome.outcome is GateOutcome.INVALID
    assert "not found in the watched storage" in _reasons(run)


def test_storage_dirs_come_from_params_then_the_server_environment() -> None:
    given = storage_dirs_for(("/srv/videos",), {"VLLM_OMNI_SERVER_STORAGE__PATH": "/x"})
    assert given == (Path("/srv/videos"),)
    new = {"VLLM_OMNI_SERVER_STORAGE__PATH": "/data/new", "VLLM_OMNI_STORAGE_PATH": "/old"}
    assert storage_dirs_for((), new) == (Path("/data/new"),)
    assert storage_dirs_for((), {"VLLM_OMNI_STORAGE_PATH": "/old"}) == (Path("/old"),)
    # vLLM-Omni 0.30's own default (server_settings.FileBackend.path) when nothing is set.
    assert storage_dirs_for((), {}) == (Path("/tmp/storage"),)
    # No server environment to read (a deployment given by URL): nothing to watch.
    assert storage_dirs_for((), None) == ()
