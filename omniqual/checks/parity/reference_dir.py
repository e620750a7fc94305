"""A reference directory: the official pipeline's outputs made once, kept as a manifest plus media.

``omniqual reference build`` writes it on any machine that has the checkpoint; the
``reference-parity`` gate reads it for a deployment whose checkpoint is not local. The manifest
(:class:`ReferenceManifest`, ``reference-manifest.json``) records per case the request
parameters (the prompt only by its sha256) and each media file's sha256. Reading verifies every
hash and refuses what does not match: references that cannot be trusted prove nothing.
"""

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from omniqual.checks.parity.reference_source import ReferenceMedia, ReferenceSet
from omniqual.checks.parity.requests import ParityCase

MANIFEST_NAME = "reference-manifest.json"


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ManifestMedia(_Frozen):
    file: str = Field(description="Name inside the directory.")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    media_type: str
    fps: float | None = None
    sample_rate: int | None = None


class ManifestCase(_Frozen):
    id: str
    api_mode: str
    kind: Literal["image", "video", "audio"]
    prompt_sha256: str
    params: dict[str, JsonValue] = Field(description="The request without its prompt.")
    media: tuple[ManifestMedia, ...] = ()
    error: str | None = None


class ReferenceManifest(_Frozen):
    schema_version: Literal[1] = 1
    model: str
    official: str = Field(description="The contract's official implementation line.")
    pipeline_class: str
    checkpoint: str = Field(description="Checkpoint path or name it was made from.")
    checkpoint_sha256: str | None = None
    dtype: str
    device: str
    scheduler: str
    generator: str
    versions: dict[str, str]
    command: tuple[str, ...]
    cases: tuple[ManifestCase, ...]


class ReferenceDirError(ValueError):
    """The directory cannot serve as a reference (missing, unreadable, or tampered with)."""


def prompt_hash(prompt: str) -> str:
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()


def case_params(case: ParityCase) -> dict[str, JsonValue]:
    return {k: v for k, v in case.values.items() if k != case.prompt_field}


def manifest_case(
    case: ParityCase, media: ReferenceMedia | None, error: str | None
) -> ManifestCase:
    entries: list[ManifestMedia] = []
    for index, data in enumerate(media.items if media else ()):
        assert media is not None
        suffix = {"image/png": "png", "audio/wav": "wav"}.get(media.media_type, "npy")
        entries.append(ManifestMedia(
            file=f"{case.id.replace('/', '_')}-{index}.{suffix}",
            sha256=hashlib.sha256(data).hexdigest(), media_type=media.media_type,
            fps=media.fps, sample_rate=media.sample_rate,
        ))  # fmt: skip
    return ManifestCase(id=case.id, api_mode=case.api_mode, kind=case.kind,
                        prompt_sha256=prompt_hash(case.prompt), params=case_params(case),
                        media=tuple(entries), error=error)  # fmt: skip


def write_reference_dir(
    out: Path, manifest: ReferenceManifest, media: Mapping[str, ReferenceMedia]
) -> Path:
    """Write each case's media under the names the manifest gives, then the manifest last."""
    out.mkdir(parents=True, exist_ok=True)
    for case in manifest.cases:
        found = media.get(case.id)
        for entry, data in zip(case.media, found.items if found else (), strict=True):
            (out / entry.file).write_bytes(data)
    path = out / MANIFEST_NAME
    path.write_text(manifest.model_dump_json(indent=1), encoding="utf-8")
    return path


@dataclass(frozen=True, slots=True)
class LoadedReference:
    manifest: ReferenceManifest
    references: ReferenceSet


def load_reference_dir(directory: Path) -> LoadedReference:
    """Read and verify a reference directory; every hash mismatch is named in the error."""
    path = directory / MANIFEST_NAME
    try:
        manifest = ReferenceManifest.model_validate_json(path.read_bytes())
    except OSError as exc:
        raise ReferenceDirError(f"no readable {MANIFEST_NAME} in {directory}: {exc}") from None
    except (ValidationError, json.JSONDecodeError) as exc:
        raise ReferenceDirError(f"{path} is not a reference manifest: {exc}") from None
    problems: list[str] = []
    media: dict[str, ReferenceMedia] = {}
    errors: dict[str, str] = {}
    for case in manifest.cases:
        items: list[bytes] = []
        for entry in case.media:
            try:
                data = (directory / entry.file).read_bytes()
            except OSError:
                problems.append(f"{case.id}: media file {entry.file} is missing")
                continue
            digest = hashlib.sha256(data).hexdigest()
            if digest != entry.sha256:
                problems.append(f"{case.id}: {entry.file} has sha256 {digest[:12]}…, the"
                                f" manifest says {entry.sha256[:12]}…")  # fmt: skip
            items.append(data)
        if case.error is not None:
            errors[case.id] = case.error
        elif case.media:
            first = case.media[0]
            media[case.id] = ReferenceMedia(tuple(items), first.media_type, first.fps,
                                            first.sample_rate)  # fmt: skip
    if problems:
        raise ReferenceDirError(
            f"reference directory {directory} does not match its manifest: " + "; ".join(problems)
        )
    return LoadedReference(manifest, ReferenceSet(media, errors))


def request_mismatch(case: ParityCase, manifest: ReferenceManifest) -> str | None:
    """Why the manifest's case cannot stand for ``case``: absent, or made from another request."""
    found = next((c for c in manifest.cases if c.id == case.id), None)
    if found is None:
        return f"{case.id}: the reference directory has no such case"
    if found.prompt_sha256 != prompt_hash(case.prompt):
        return f"{case.id}: the reference was made from another prompt"
    params = case_params(case)
    differ = sorted(k for k in {*params, *found.params} if params.get(k) != found.params.get(k))
    if differ:
        shown = ", ".join(
            f"{k}={found.params.get(k)!r} (request {params.get(k)!r})" for k in differ
        )
        return f"{case.id}: the reference was made with {shown}"
    return None
