"""Side effects a rejection must not have (Gate 0 "validate before side effects"): no async job,
no temp file left behind, and a server that is still healthy and still serves a good request."""

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from omniqual.client import ClientError, OmniClient


async def video_job_ids(client: OmniClient) -> frozenset[str] | None:
    """Ids in ``GET /v1/videos`` (newest 100); None when the list is not served."""
    try:
        raw = await client.send_raw("GET", "/v1/videos", params={"limit": 100}, timeout_s=30)
        doc = raw.json() if raw.ok else None
    except ClientError:
        return None
    data = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(data, list):
        return None
    return frozenset(str(item["id"]) for item in data if isinstance(item, dict) and "id" in item)


@dataclass(frozen=True, slots=True)
class TempSnapshot:
    """Entry names (top level) of each watched temp directory."""

    entries: tuple[tuple[str, frozenset[str]], ...]

    @classmethod
    def take(cls, dirs: Iterable[Path]) -> "TempSnapshot":
        taken = []
        for directory in dirs:
            try:
                names = frozenset(entry.name for entry in os.scandir(directory))
            except OSError:
                names = frozenset()
            taken.append((str(directory), names))
        return cls(tuple(taken))

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
