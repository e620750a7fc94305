"""Side effects a rejection must not have (Gate 0 "validate before side effects"): no async job,
no temp file left behind, and a server that is still healthy and still serves a good request.
A signal that cannot be had (no job list, no readable temp dir) is reported with its reason, so
the gate can say it did not check instead of passing."""

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from omniqual.client import ClientError, OmniClient
from omniqual.domain.evidence import CaseResult
from omniqual.domain.outcomes import GateOutcome


@dataclass(frozen=True, slots=True)
class JobListing:
    """The job ids ``GET /v1/videos`` lists (newest 100), or why there is no list to compare."""

    ids: frozenset[str] | None
    unavailable: str = ""


async def video_job_ids(client: OmniClient) -> JobListing:
    try:
        raw = await client.send_raw("GET", "/v1/videos", params={"limit": 100}, timeout_s=30)
    except ClientError as exc:
        return JobListing(None, f"GET /v1/videos gave no answer ({type(exc).__name__})")
    if not raw.ok:
        return JobListing(None, f"GET /v1/videos answered HTTP {raw.status}")
    try:
        doc = raw.json()
    except ClientError:
        doc = None
    data = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(data, list):
        return JobListing(None, "GET /v1/videos answered no `data` list")
    return JobListing(
        frozenset(str(item["id"]) for item in data if isinstance(item, dict) and "id" in item)
    )


@dataclass(frozen=True, slots=True)
class TempSnapshot:
    """Entry names (top level) of each watched temp directory; a directory that cannot be read
    is listed in ``unreadable``, never counted as empty."""

    entries: tuple[tuple[str, frozenset[str]], ...]
    unreadable: tuple[str, ...] = ()

    @classmethod
    def take(cls, dirs: Iterable[Path]) -> "TempSnapshot":
        taken, unreadable = [], []
        for directory in dirs:
            try:
                names = frozenset(entry.name for entry in os.scandir(directory))
            except OSError as exc:
                unreadable.append(f"{directory} ({exc.strerror or type(exc).__name__})")
                continue
            taken.append((str(directory), names))
        return cls(tuple(taken), tuple(unreadable))

    def new_since(self, earlier: "TempSnapshot") -> list[str]:
        before = dict(earlier.entries)
        return sorted(
            f"{directory}/{name}"
            for directory, names in self.entries
            for name in names - before.get(directory, frozenset())
        )


async def health_status(client: OmniClient) -> int | None:
    try:
        return (await client.send_raw("GET", "/health", timeout_s=30)).status
    except ClientError:
        return None


async def served_release(client: OmniClient) -> str | None:
    """The release ``GET /version`` reports (vLLM's route; the CPU build shares the number)."""
    try:
        raw = await client.send_raw("GET", "/version", timeout_s=30)
        doc = raw.json() if raw.ok else None
    except ClientError:
        return None
    version = doc.get("version") if isinstance(doc, dict) else None
    return version if isinstance(version, str) else None


def job_case(rejections: int, unlisted: list[str], created: bool) -> tuple[CaseResult, list[str]]:
    """The recorded no-job check over the rejected async requests, and why it is invalid (when
    the job list could not be had for some of them)."""
    if unlisted:
        why = (
            f"no job list to prove {len(unlisted)} rejected async request(s) created no job: "
            f"{unlisted[0]}"
        )
        invalid = [f"side-effects/async-jobs not checked: {why}"]
        outcome, observed = GateOutcome.SKIPPED, "not checked"
    else:
        why = f"GET /v1/videos before and after each of {rejections} rejection(s)"
        invalid, outcome, observed = [], GateOutcome.PASSED, "no new job"
    if created:
        outcome, observed = GateOutcome.FAILED, "new job(s)"
    result = CaseResult(
        id="side-effects/async-jobs",
        endpoint="videos-async",
        expected_status="no job for a rejected request",
        observed_status=observed,
        outcome=outcome,
        note=why[:240],
    )
    return result, invalid


def temp_case(
    dirs: list[Path], start: TempSnapshot, end: TempSnapshot
) -> tuple[CaseResult, list[str], list[str]]:
    """The recorded temp-residue check: (case, failures, why it is invalid). No directory to
    watch, or one that cannot be read, is an unchecked signal, never an empty one."""
    unreadable = [*start.unreadable, *(u for u in end.unreadable if u not in start.unreadable)]
    left = end.new_since(start)
    failures = (
        [
            f"leaves_temp_file: {len(left)} new entr(y/ies) remain in the temp dirs after the "
            f"gate: {left[:3]}"
        ]
        if left
        else []
    )
    invalid: list[str] = []
    if not dirs or unreadable:
        why = (
            f"temp dir(s) unreadable: {unreadable[:3]}"
            if unreadable
            else "no temp dir to watch (give params.temp_dirs, or let omniqual launch the "
            "target so its TMPDIR is watched)"
        )
        invalid.append(f"side-effects/temp-files not checked: {why}")
        outcome, observed = GateOutcome.SKIPPED, "not checked"
    else:
        why = f"watched {len(dirs)} temp dir(s)"
        outcome, observed = GateOutcome.PASSED, "none new"
    if left:
        outcome, observed = GateOutcome.FAILED, f"{len(left)} new"
    result = CaseResult(
        id="side-effects/temp-files",
        endpoint="-",
        expected_status="no new temp files",
        observed_status=observed,
        outcome=outcome,
        note=why[:240],
    )
    return result, failures, invalid
