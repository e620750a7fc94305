"""The async video lifecycle after DELETE (SKILL G0-30): a job is created with the probe, polled
to ``completed``, its content fetched, its stored file found in the server's storage directory,
then deleted; afterwards its content route must answer 404 and its stored file must be gone.

vLLM-Omni stores a finished job's video under its storage path, named by the job id
(``vllm_omni/entrypoints/openai/storage.py``); the path is the server's setting, read from its
process environment when the gate knows the process, else given as ``storage_dirs``. Without a
directory to watch, or when the job's file never shows there, the stored-file half cannot be
decided: the case is not checked and the gate invalid, never passed."""

import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import psutil

from omniqual.checks.api_contract.cases import Case
from omniqual.checks.api_contract.exchange import ExchangeRecord, Timeouts, job_id
from omniqual.checks.api_contract.wire import build_request
from omniqual.client import ClientError, OmniClient
from omniqual.domain.evidence import CaseResult
from omniqual.domain.outcomes import GateOutcome

CASE_ID = "videos-async/lifecycle/delete"
STORAGE_ENV = ("VLLM_OMNI_SERVER_STORAGE__PATH", "VLLM_OMNI_STORAGE_PATH")
"""vLLM-Omni 0.30's storage path settings, the current name first (server_settings.py)."""
DEFAULT_STORAGE = Path("/tmp/storage")
"""vLLM-Omni 0.30's default storage path (server_settings.FileBackend.path) when neither is set."""


def storage_dirs_for(given: tuple[str, ...], environ: Mapping[str, str] | None) -> tuple[Path, ...]:
    """The directories to watch: those given, else the server's setting (its environment), else
    the release's default; none when the server's environment cannot be read (a URL target)."""
    if given:
        return tuple(Path(d) for d in given)
    if environ is None:
        return ()
    configured = next((environ[name] for name in STORAGE_ENV if environ.get(name)), None)
    return (Path(configured),) if configured else (DEFAULT_STORAGE,)


def server_environ(pid: int | None) -> Mapping[str, str] | None:
    """The environment the server process started with (None: no pid, gone or unreadable)."""
    if pid is None:
        return None
    with contextlib.suppress(psutil.Error, OSError):
        return psutil.Process(pid).environ()
    return None


@dataclass(frozen=True, slots=True)
class LifecycleCheck:
    result: CaseResult
    failures: list[str]
    invalid: list[str]
    records: list[ExchangeRecord]


def _stored(dirs: tuple[Path, ...], video_id: str) -> list[Path]:
    """Entries of the watched dirs named by the job id (``<id>`` or ``<id>.mp4``)."""
    found = []
    for directory in dirs:
        with contextlib.suppress(OSError):
            found += [Path(e.path) for e in os.scandir(directory) if e.name.startswith(video_id)]
    return sorted(found)


async def check_delete(
    client: OmniClient, probe: Case, dirs: tuple[Path, ...], timeouts: Timeouts
) -> LifecycleCheck:
    records: list[ExchangeRecord] = []

    async def send(method: str, path: str) -> int:
        raw = await client.send_raw(method, path, timeout_s=timeouts.request_s)
        records.append(ExchangeRecord.of(CASE_ID, raw))
        return raw.status

    wire = build_request(probe)
    try:
        created = await client.send_raw(wire.method, wire.path, data=wire.data,
                                        files=list(wire.files) or None,
                                        timeout_s=timeouts.request_s)  # fmt: skip
        records.append(ExchangeRecord.of(CASE_ID, created))
        video_id = job_id(created) if created.ok else None
        if video_id is None:
            why = f"POST /v1/videos answered HTTP {created.status} with no job id"
            return _undone(f"the probe job could not be created ({why})", records)
        polled = await client.wait_video(
            video_id, interval_s=timeouts.poll_interval_s, timeout_s=timeouts.job_s
        )
        if polled.final.status != "completed":
            return _undone(f"the probe job ended {polled.final.status}", records)
        content = f"/v1/videos/{video_id}/content"
        if (status := await send("GET", content)) != 200:
            return _undone(f"GET content of the finished job answered HTTP {status}", records)
        stored = _stored(dirs, video_id)
        deleted = await send("DELETE", f"/v1/videos/{video_id}")
        if not 200 <= deleted < 300:
            failure = f"delete_refused: DELETE of the finished job answered HTTP {deleted}"
            return _judged([failure], [], dirs, records)
        after = await send("GET", content)
    except ClientError as exc:
        return _undone(f"{type(exc).__name__}: {str(exc)[:160]}", records)
    return _judged(_left_behind(after, stored), _unwatched(dirs, stored), dirs, records)


def _left_behind(content_status: int, stored: list[Path]) -> list[str]:
    failures = []
    if content_status != 404:
        failures.append(f"content_after_delete: GET /v1/videos/{{id}}/content answered HTTP "
                        f"{content_status} after the job's DELETE, not 404")  # fmt: skip
    left = [str(path) for path in stored if path.exists()]
    if left:
        failures.append(f"stored_file_after_delete: the job's stored video {left[0]} remains "
                        "after its DELETE")  # fmt: skip
    return failures


def _unwatched(dirs: tuple[Path, ...], stored: list[Path]) -> list[str]:
    """Why the stored file's removal cannot be shown (no dir, or the file never seen there)."""
    if not dirs:
        return [f"{CASE_ID} not checked: no storage dir to watch (give params.storage_dirs, or "
                "the server's pid so its storage setting is read)"]  # fmt: skip
    if not stored:
        watched = [str(d) for d in dirs]
        return [f"{CASE_ID} not checked: the finished job's file was not found in the watched "
                f"storage dir(s) {watched}, so its removal cannot be shown"]  # fmt: skip
    return []


def _judged(
    failures: list[str], invalid: list[str], dirs: tuple[Path, ...], records: list[ExchangeRecord]
) -> LifecycleCheck:
    if failures:
        outcome, observed = GateOutcome.FAILED, "left behind"
    elif invalid:
        outcome, observed = GateOutcome.SKIPPED, "content 404; file not checked"
    else:
        outcome, observed = GateOutcome.PASSED, "content 404, file gone"
    note = "; ".join(failures) or "; ".join(invalid) or f"watched {[str(d) for d in dirs]}"
    return LifecycleCheck(_result(outcome, observed, note), failures, invalid, records)


def _undone(why: str, records: list[ExchangeRecord]) -> LifecycleCheck:
    invalid = [f"{CASE_ID} not checked: {why}"]
    return LifecycleCheck(_result(GateOutcome.SKIPPED, "not checked", why), [], invalid, records)


def _result(outcome: GateOutcome, observed: str, note: str) -> CaseResult:
    return CaseResult(
        id=CASE_ID,
        endpoint="videos-async",
        sent="the probe as a job, deleted once finished",
        expected_status="content 404 and no stored file after DELETE",
        observed_status=observed,
        outcome=outcome,
        note=note[:240],
    )
