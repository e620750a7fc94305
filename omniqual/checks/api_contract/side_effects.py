"""Side effects a rejection must not have (Gate 0 "validate before side effects"): no async job,
no temp file left behind, and a server that is still healthy and still serves a good request.
A signal that cannot be had (no job list, no readable temp dir) is reported with its reason, so
the gate can say it did not check instead of passing."""

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from omniqual.client import ClientError, OmniClient


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
