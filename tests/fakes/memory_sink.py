"""An in-memory artifact sink for check tests: keeps every artifact's bytes by name."""

from __future__ import annotations

import hashlib
from pathlib import Path

from omniqual.domain.evidence import Artifact


class MemorySink:
    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}
        self.artifacts: list[Artifact] = []

    def put_artifact(
        self, data: bytes | Path, *, media_type: str, role: str, name: str
    ) -> Artifact:
        blob = data.read_bytes() if isinstance(data, Path) else data
        self.blobs[name] = blob
        artifact = Artifact(
            sha256=hashlib.sha256(blob).hexdigest(), size=len(blob), media_type=media_type,
            role=role, name=name,
        )
        self.artifacts.append(artifact)
        return artifact
