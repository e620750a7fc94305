"""Public field names (SKILL G0-22, G0-24): every field the gate's requests carry is a property
of the endpoint's request schema as the server publishes it (``GET /openapi.json``, its
``requestBody`` in the endpoint's encoding: multipart form or JSON), so the contract, and every
request built from it, uses the public name and never a pipeline attribute the API does not
have; so do the top-level fields of the curl the report publishes for each task. A chat request
carries its fields in a generic envelope (``extra_body``): that is sent only where the schema
takes it (declared, or open to extra properties), and a field it carries that the schema also
declares at top level is noted (a declared field is preferred). A field missing from the schema
fails the gate, named; an endpoint whose schema the document does not give is recorded as not
checked, never passed."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from omniqual.domain.contract import MULTIPART_MODES, EndpointContract
from omniqual.domain.evidence import CaseResult
from omniqual.domain.outcomes import GateOutcome

from .wire import CHAT_ENVELOPE, PROMPT_FIELD

PUBLIC_FIELDS_CASE = "contract/public-fields"
CHAT_MODE = "chat-completions"


def published_fields(api_mode: str, task: str) -> tuple[str, ...]:
    """The top-level fields of the curl the report publishes for ``task`` on ``api_mode``
    (``omniqual.report.curl.task_curl``; a test holds the two to each other)."""
    if api_mode == CHAT_MODE:
        return ("model", "messages")
    if api_mode == "images-generations":
        return ("model", "prompt", "n", "seed")
    if api_mode == "images-edits":
        return ("model", "prompt", "image")
    if api_mode in ("videos-async", "videos-sync"):
        referenced = task in ("i2v", "ti2v", "v2v")
        return ("model", "prompt", *(("input_reference",) if referenced else ()))
    if api_mode == "audio-generate":
        return ("model", "input", "response_format")
    return ()


@dataclass(frozen=True, slots=True)
class RequestSchema:
    title: str
    properties: frozenset[str]
    open: bool
    """Whether the schema takes properties it does not declare (``additionalProperties``)."""


@dataclass(frozen=True, slots=True)
class PublicFieldsCheck:
    result: CaseResult
    failures: tuple[str, ...] = ()


def request_schema(doc: Mapping[str, Any] | None, path: str, content: str) -> RequestSchema | None:
    """The POST request body schema of ``path`` in ``content`` encoding, its ``$ref`` resolved."""
    if not isinstance(doc, Mapping):
        return None
    try:
        schema = doc["paths"][path]["post"]["requestBody"]["content"][content]["schema"]
        ref = schema.get("$ref")
        if isinstance(ref, str):
            schema = doc["components"]["schemas"][ref.rsplit("/", 1)[-1]]
        properties = schema["properties"]
    except (KeyError, TypeError, AttributeError):
        return None
    if not isinstance(properties, Mapping):
        return None
    extra = schema.get("additionalProperties", False)
    return RequestSchema(str(schema.get("title", path)), frozenset(map(str, properties)),
                         bool(extra))  # fmt: skip


def check_public_fields(
    doc: Mapping[str, Any] | None, endpoints: Sequence[EndpointContract]
) -> PublicFieldsCheck:
    failures: list[str] = []
    notes: list[str] = []
    unchecked: list[str] = []
    for endpoint in endpoints:
        multipart = endpoint.api_mode in MULTIPART_MODES
        content = "multipart/form-data" if multipart else "application/json"
        schema = request_schema(doc, endpoint.path, content)
        if schema is None:
            unchecked.append(endpoint.path)
            continue
        published = published_fields(endpoint.api_mode, endpoint.task)
        failures += [
            f"field_not_public: {name!r}, which the report's curl for {endpoint.task} sends, is "
            f"not a property of {endpoint.path}'s public request schema ({schema.title} in GET "
            "/openapi.json) (SKILL G0-22)"
            for name in published
            if name not in schema.properties
        ]
        if endpoint.api_mode == CHAT_MODE:
            failures += _envelope_problems(endpoint, schema, notes)
            continue
        sent = [*(f.name for f in endpoint.fields), *(i.field for i in endpoint.inputs)]
        failures += [
            f"field_not_public: {name!r} of {endpoint.path} is not a property of its public "
            f"request schema ({schema.title} in GET /openapi.json): the API has no such field "
            "(SKILL G0-22)"
            for name in sent
            if name not in schema.properties and name not in published
        ]
    return PublicFieldsCheck(_result(failures, notes, unchecked), tuple(failures))


def _envelope_problems(
    endpoint: EndpointContract, schema: RequestSchema, notes: list[str]
) -> list[str]:
    found: list[str] = []
    if CHAT_ENVELOPE not in schema.properties and not schema.open:
        found.append(f"envelope_not_exposed: {endpoint.path} sends its fields in "
                     f"{CHAT_ENVELOPE!r}, which its public request schema ({schema.title}) "
                     "neither declares nor takes as an extra property (SKILL G0-24)")  # fmt: skip
    enveloped = [f.name for f in endpoint.fields if f.name != PROMPT_FIELD]
    declared = [name for name in enveloped if name in schema.properties]
    if declared:
        notes.append(f"{endpoint.path}: {', '.join(declared)} sent in {CHAT_ENVELOPE} though "
                     "the schema declares them top-level")  # fmt: skip
    return found


def _result(failures: list[str], notes: list[str], unchecked: list[str]) -> CaseResult:
    if failures:
        outcome, observed = GateOutcome.FAILED, f"{len(failures)} not public"
    elif unchecked:
        outcome, observed = GateOutcome.SKIPPED, "not checked"
    else:
        outcome, observed = GateOutcome.PASSED, "all public"
    said = [*notes]
    if unchecked:
        said.append(f"not checked (no request schema in GET /openapi.json): "
                    f"{', '.join(unchecked)}")  # fmt: skip
    return CaseResult(id=PUBLIC_FIELDS_CASE, endpoint="-", expected_status="every field sent "
                      "in the public request schema", observed_status=observed,
                      outcome=outcome, note="; ".join(said)[:240])  # fmt: skip
