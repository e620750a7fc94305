"""The content-addressed artifact store of one run: ``<run_dir>/artifacts/<sha256>``.

A file is written to a temp file while it is hashed, fsynced, then published under its hash;
content already present is not written twice. Publication happens before the journal records the
artifact, so a journaled artifact is always complete on disk.
"""

import hashlib
import os
import re
from pathlib import Path

from omniqual.evidence.durable import publish, temp_file_in, write_all
from omniqual.evidence.errors import StoreError

ARTIFACTS_DIR = "artifacts"
_CHUNK = 1 << 20
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def artifact_path(run_dir: Path, sha256: str) -> Path:
    """Where the artifact with this hash lives in a run (whether or not it exists)."""
    if not _SHA256.match(sha256):
        raise StoreError(f"not a sha256 hex digest: {sha256[:80]!r}")
    return run_dir / ARTIFACTS_DIR / sha256


def _present(path: Path, size: int) -> bool:
    try:
        return path.stat().st_size == size
    except FileNotFoundError:
        return False


def store_bytes(run_dir: Path, data: bytes) -> tuple[str, int]:
    """Store ``data``; returns (sha256, size) once it is durable under its final name."""
    sha256 = hashlib.sha256(data).hexdigest()
    final = artifact_path(run_dir, sha256)
    if not _present(final, len(data)):
        directory = final.parent
        with temp_file_in(directory) as (fd, temp):
            write_all(fd, data)
        _publish_or_drop(temp, final)
    return sha256, len(data)


def store_file(run_dir: Path, source: Path) -> tuple[str, int]:
    """Copy ``source`` into the store in chunks, hashing as it goes; returns (sha256, size)."""
    directory = run_dir / ARTIFACTS_DIR
    digest = hashlib.sha256()
    size = 0
    try:
        reader = source.open("rb")
    except OSError as exc:
        raise StoreError(f"{source}: cannot read artifact ({exc.strerror})") from None
    with reader, temp_file_in(directory) as (fd, temp):
        while chunk := reader.read(_CHUNK):
            digest.update(chunk)
            write_all(fd, chunk)
            size += len(chunk)
    sha256 = digest.hexdigest()
    final = artifact_path(run_dir, sha256)
    if _present(final, size):
        temp.unlink(missing_ok=True)
    else:
        _publish_or_drop(temp, final)
    return sha256, size


def _publish_or_drop(temp: Path, final: Path) -> None:
    try:
        publish(temp, final)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def check_artifact(path: Path, sha256: str, size: int) -> str | None:
    """What is wrong with a stored artifact (missing, wrong size, corrupted), or None."""
    try:
        actual_size = os.stat(path).st_size
    except FileNotFoundError:
        return f"{path}: artifact missing"
    if actual_size != size:
        return f"{path}: artifact size {actual_size} bytes, journal says {size}"
    with path.open("rb") as handle:
        actual = hashlib.file_digest(handle, "sha256").hexdigest()
    if actual != sha256:
        return f"{path}: artifact corrupted (content hashes to {actual[:12]}…)"
    return None
