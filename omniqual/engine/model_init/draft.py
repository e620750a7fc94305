"""``model init``: ask a running server what it is and draft the files that qualify it.

Three questions, none of which creates work on the server: ``GET /openapi.json`` (the request
schema), ``GET /v1/models`` (the served id) and ``GET /version`` (the release it reports), plus
the official pipeline's signature when one is named. Existing files are never overwritten unless
asked; the drafts are written whole (atomically) or not at all.
"""

import os
import re
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx

from omniqual.client.client import OmniClient, OpenApiDocument
from omniqual.domain.contract import ENDPOINT_PATHS
from omniqual.domain.definition_of_done import DRAFTED_GATES
from omniqual.domain.provenance import REVISION_FIELDS, UNKNOWN, Provenance
from omniqual.engine.model_init.contract_draft import draft_endpoint
from omniqual.engine.model_init.documents import (
    DraftFacts,
    contract_text,
    matrix_text,
    recipe_text,
)
from omniqual.engine.model_init.official import OfficialSignature, read_official
from omniqual.engine.model_init.openapi import endpoint_schema
from omniqual.engine.model_init.probe import ProbeReport, probe_contract
from omniqual.engine.model_init.todos import count_todos
from omniqual.engine.targets.served_identity import ServedIdentity, identify_deployment
from omniqual.engine.targets.targets import TargetNotReady
from omniqual.specs.project import ProjectPaths

TASK_MODES: dict[str, str] = {
    "t2i": "images-generations",
    "layered": "images-generations",
    "i2i": "images-edits",
    "ti2i": "images-edits",
    "multi-image-edit": "images-edits",
    "t2v": "videos-async",
    "i2v": "videos-async",
    "ti2v": "videos-async",
    "v2v": "videos-async",
    "t2a": "audio-generate",
}
TRANSPORTS: dict[str, str] = {
    "images-generations": "b64-json",
    "images-edits": "b64-json",
    "videos-async": "async-artifact",
    "videos-sync": "mp4-bytes",
    "audio-generate": "wav-bytes",
    "chat-completions": "data-url",
}
NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")


class DraftExists(ValueError):
    """A drafted file is already there (a usage error: nothing is overwritten silently)."""


@dataclass(frozen=True, slots=True)
class InitRequest:
    name: str
    url: str
    task: str = "t2i"
    official: str | None = None
    force: bool = False


@dataclass(frozen=True, slots=True)
class DraftedFiles:
    matrix: Path
    contract: Path
    recipe: Path

    def all(self) -> tuple[Path, Path, Path]:
        return (self.matrix, self.contract, self.recipe)


@dataclass(frozen=True, slots=True)
class InitResult:
    files: DraftedFiles
    written: bool
    """False when the files existed and were left alone (a ``--probe`` of the existing draft)."""
    facts: DraftFacts
    todos: int


def drafted_paths(project: ProjectPaths, name: str) -> DraftedFiles:
    return DraftedFiles(
        project.matrices / f"{name}.yaml",
        project.gates / "contracts" / f"{name}.yaml",
        project.runners / f"{name}.yaml",
    )


async def ask_server(
    url: str, transport: httpx.AsyncBaseTransport | None = None
) -> tuple[OpenApiDocument, ServedIdentity]:
    """The schema and the identity; a server that is not healthy is not drafted from."""
    async with OmniClient(url, transport=transport) as client:
        health = await client.health()
        if not health.healthy:
            raise TargetNotReady(f"{url}/health answered HTTP {health.status}: not ready")
        document = await client.openapi()
    return document, await identify_deployment(url, transport=transport)


def api_mode_of(task: str) -> str:
    mode = TASK_MODES.get(task)
    if mode is None:
        known = ", ".join(sorted(TASK_MODES))
        raise ValueError(f"--task {task!r}: no API mode is known for it (known: {known})")
    return mode


def checked_mode(request: InitRequest) -> str:
    """The API mode of the request's task, once its name and task are usable (usage errors
    come before the server is asked anything)."""
    if not NAME.fullmatch(request.name):
        raise ValueError(
            f"{request.name!r}: a model name is lower case letters, digits, '.', "
            "'_' and '-' (it names the matrix, contract and recipe)"
        )
    return api_mode_of(request.task)


def revision_pins(identity: ServedIdentity) -> dict[str, str]:
    """The revisions a result from this URL records as known: the only ones a pin can match.
    Not its served identity: that pin would hold only until the server restarts."""
    recorded = identity.provenance(Provenance())
    return {
        name: value
        for name in REVISION_FIELDS
        if name != "served_identity_sha256"
        and isinstance(value := getattr(recorded, name), str)
        and value != UNKNOWN
    }


_OUTPUT_KINDS = {"videos-async": "video", "videos-sync": "video", "audio-generate": "audio"}
_SHAPE_FIELDS: dict[str, dict[str, tuple[str, ...]]] = {
    "image": {"count_field": ("n", "num_outputs_per_prompt"), "size_field": ("size",),
              "format_field": ("output_format",)},
    "video": {"size_field": ("size",), "frames_field": ("num_frames",)},
    "audio": {"format_field": ("response_format",)},
}  # fmt: skip
"""Per output kind, the request fields that set the output's shape (the first one drafted)."""


def output_of(mode: str, drafted: set[str]) -> dict[str, object]:
    kind = _OUTPUT_KINDS.get(mode, "image")
    output: dict[str, object] = {"kind": kind}
    for key, names in _SHAPE_FIELDS[kind].items():
        found = next((n for n in names if n in drafted), None)
        if found is not None:
            output[key] = found
    return output


def draft_files(
    request: InitRequest,
    document: OpenApiDocument,
    identity: ServedIdentity,
    gate_ids: tuple[str, ...],
) -> tuple[DraftFacts, dict[str, str], int]:
    """The facts and the text of each drafted file (matrix, contract, recipe), with its TODOs."""
    mode = checked_mode(request)
    schema = endpoint_schema(document, ENDPOINT_PATHS[mode])
    official = read_official(request.official) if request.official else None
    signature = official if isinstance(official, OfficialSignature) else None
    endpoint = draft_endpoint(schema, signature)
    facts = DraftFacts(
        name=request.name,
        url=request.url,
        task=request.task,
        api_mode=mode,
        output_transport=TRANSPORTS[mode],
        endpoint_path=schema.path,
        schema_name=schema.schema_name,
        served_model=identity.model_ids[0] if identity.model_ids else UNKNOWN,
        reported_version=identity.vllm_version,
        pins=revision_pins(identity),
        official=official,
        # The whole Definition of Done, never a shortcut: the drafted row is the model's
        # baseline and its first candidate for recommendation. Gates the project defines no
        # spec of are left out (the matrix loader asks only for those it can run).
        gates=tuple(g for g in DRAFTED_GATES if g in gate_ids) or DRAFTED_GATES,
        today=datetime.now(UTC).date().isoformat(),
    )
    drafted = {str(f["name"]) for f in endpoint.fields}
    texts = {
        "matrix": matrix_text(facts),
        "contract": contract_text(facts, endpoint, output_of(mode, drafted)),
        "recipe": recipe_text(facts),
    }
    todos = sum(count_todos(text) for text in texts.values())
    return facts, texts, todos


def write_drafts(files: DraftedFiles, texts: dict[str, str], *, force: bool) -> None:
    existing = [p for p in files.all() if p.exists()]
    if existing and not force:
        listed = ", ".join(str(p) for p in existing)
        raise DraftExists(f"{listed} already exist: edit them, or pass --force to redraft")
    for path, key in zip(files.all(), ("matrix", "contract", "recipe"), strict=True):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(texts[key])
        os.replace(tmp, path)


async def init_model(
    request: InitRequest,
    project: ProjectPaths,
    *,
    probe: bool = False,
    transport: httpx.AsyncBaseTransport | None = None,
) -> tuple[InitResult, ProbeReport | None]:
    """Draft (unless the files exist and ``probe`` only re-checks them), then probe if asked."""
    checked_mode(request)
    files = drafted_paths(project, request.name)
    document, identity = await ask_server(request.url, transport)
    gate_ids = tuple(p.stem for p in sorted(project.gates.glob("*.yaml")))
    facts, texts, todos = draft_files(request, document, identity, gate_ids)
    keep = probe and not request.force and all(p.exists() for p in files.all())
    if not keep:
        write_drafts(files, texts, force=request.force)
    else:
        todos = sum(count_todos(p.read_text(encoding="utf-8")) for p in files.all())
    result = InitResult(files, not keep, facts, todos)
    if not probe:
        return result, None
    report = await probe_contract(request.url, files.contract, facts.api_mode, transport=transport)
    return result, report
