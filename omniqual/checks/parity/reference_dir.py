"""A reference directory: the official pipeline's outputs made once, kept as a manifest plus media.

``omniqual reference build`` writes it on any machine that has the checkpoint; the
``reference-parity`` gate reads it for a deployment whose checkpoint is not local. The manifest
(:class:`ReferenceManifest`, ``reference-manifest.json``) records per case the request
parameters (the prompt only by its sha256) and each media file's sha256. Reading verifies every
hash and refuses what does not match: references that cannot be trusted prove nothing. Nor do
references of something else: :func:`identity_mismatches` holds the manifest's pipeline class,
checkpoint sha256 and dtype against the target's, where the target's is known.
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


@dataclass(frozen=True, slots=True)
class TargetIdentity:
    """What the target is, for holding a reference directory against it; None: not known."""

    pipeline_class: str
    """The contract's official class: what the live reference would run."""
    checkpoint_sha256: str | None
    dtype: str | None
    """A torch dtype name (``bfloat16``)."""


def identity_mismatches(
    manifest: ReferenceManifest, target: TargetIdentity
) -> tuple[list[str], dict[str, str]]:
    """(why the directory is not a reference of the target, what each identity field came to):
    a field the target or the directory leaves unknown is said to be not compared."""
    mismatches: list[str] = []
    said: dict[str, str] = {}
    if manifest.pipeline_class != target.pipeline_class:
        mismatches.append(
            f"the reference directory was made by {manifest.pipeline_class}, the contract's"
            f" official implementation is {target.pipeline_class}"
        )
    said["pipeline_class"] = f"{manifest.pipeline_class} (as the contract's official)"
    pairs = (
        ("checkpoint_sha256", manifest.checkpoint_sha256, target.checkpoint_sha256,
         "checkpoint sha256"),
        ("dtype", manifest.dtype, target.dtype, "dtype"),
    )  # fmt: skip
    for name, made, served, label in pairs:
        if served is None:
            said[name] = f"not compared: the target's is unknown (the reference's is {made})"
        elif made is None:
            said[name] = f"not compared: the reference directory records none (target {served})"
        elif made != served:
            if name == "dtype":
                mismatches.append(f"the reference directory was made in {made}, the target"
                                  f" serves {served}")  # fmt: skip
            else:
                mismatches.append(f"the reference directory was made from {label}"
                                  f" {made[:12]}…, the target's {served[:12]}…")  # fmt: skip
        else:
            said[name] = f"{made} (as the target's)"
    return mismatches, said
