"""Read one endpoint's request fields out of the server's ``GET /openapi.json``.

vLLM-Omni's routes are FastAPI routes, so the document is pydantic's JSON schema of the request
models: ``$ref`` into ``components.schemas``, optional fields as ``anyOf [X, null]``, bounds as
``minimum``/``maximum``. Only what the schema states is taken; a bound given in prose (a
description) is not a bound, and 64-bit limits come back as floats that no longer round-trip.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from omniqual.client.client import OpenApiDocument

_INT64 = 2**63
_UINT64 = 2**64
_QUOTED = re.compile(r"'([A-Za-z0-9_.-]+)'")


@dataclass(frozen=True, slots=True)
class SchemaField:
    """One request property as the schema gives it."""

    name: str
    json_type: str
    """string, integer, number, boolean, object, array or file (a binary upload)."""
    required: bool
    default: Any = None
    minimum: int | float | None = None
    maximum: int | float | None = None
    enum: tuple[str, ...] | None = None
    description: str = ""

    def prose_choices(self) -> tuple[str, ...]:
        """Quoted values a description lists (``'png', 'jpeg', or 'webp'``): prose, not schema."""
        return tuple(dict.fromkeys(_QUOTED.findall(self.description)))


@dataclass(frozen=True, slots=True)
class EndpointSchema:
    path: str
    schema_name: str
    media_type: str
    fields: tuple[SchemaField, ...]

    def field(self, name: str) -> SchemaField | None:
        return next((f for f in self.fields if f.name == name), None)


class SchemaMissing(ValueError):
    """The server's OpenAPI document has no request schema for the endpoint."""


def endpoint_schema(doc: OpenApiDocument, path: str) -> EndpointSchema:
    """The request fields of ``POST path``."""
    post = doc.paths.get(path, {}).get("post")
    if not isinstance(post, Mapping):
        raise SchemaMissing(f"GET /openapi.json has no POST {path}")
    content = post.get("requestBody", {}).get("content", {})
    if not isinstance(content, Mapping) or not content:
        raise SchemaMissing(f"GET /openapi.json: POST {path} declares no request body")
    media_type, body = next(iter(content.items()))
    schemas = doc.components.get("schemas", {})
    schema = _resolve(body.get("schema", {}), schemas)
    name = str(schema.get("title", "")) or _ref_name(body.get("schema", {}))
    required = set(schema.get("required", ()))
    fields = tuple(
        _field(prop, spec, prop in required, schemas)
        for prop, spec in schema.get("properties", {}).items()
    )
    return EndpointSchema(path, name, str(media_type), fields)


def _ref_name(node: Mapping[str, Any]) -> str:
    return str(node.get("$ref", "")).rsplit("/", 1)[-1]


def _resolve(node: Mapping[str, Any], schemas: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str):
        target = schemas.get(ref.rsplit("/", 1)[-1], {})
        return _resolve(target, schemas) if isinstance(target, Mapping) else {}
    return node


def _non_null(node: Mapping[str, Any], schemas: Mapping[str, Any]) -> Mapping[str, Any]:
    """``anyOf [X, null]`` (an optional field) -> X; a plain node as it is."""
    options = node.get("anyOf")
    if isinstance(options, list):
        real = [o for o in options if isinstance(o, Mapping) and o.get("type") != "null"]
        if len(real) == 1:
            return _resolve(real[0], schemas)
    return _resolve(node, schemas)


def _field(
    name: str, spec: Mapping[str, Any], required: bool, schemas: Mapping[str, Any]
) -> SchemaField:
    inner = _non_null(spec, schemas)
    json_type = str(inner.get("type", "object"))
    options = [_resolve(o, schemas) for o in spec.get("anyOf", ()) if isinstance(o, Mapping)]
    if any(_is_upload(o, schemas) for o in (inner, *options)):
        json_type = "file"
    enum = inner.get("enum")
    return SchemaField(
        name=name,
        json_type=json_type,
        required=required,
        default=spec.get("default", inner.get("default")),
        minimum=_bound(inner.get("minimum"), json_type),
        maximum=_bound(inner.get("maximum"), json_type),
        enum=tuple(str(v) for v in enum) if isinstance(enum, list) else None,
        description=str(spec.get("description", inner.get("description", ""))),
    )


def _is_upload(node: Mapping[str, Any], schemas: Mapping[str, Any]) -> bool:
    """A file part: binary (OpenAPI 3.0) or with a content media type (3.1), or a list of them."""
    if node.get("format") == "binary" or "contentMediaType" in node:
        return True
    items = node.get("items")
    return node.get("type") == "array" and isinstance(items, Mapping) and _is_upload(
        _resolve(items, schemas), schemas)  # fmt: skip


def _bound(value: object, json_type: str) -> int | float | None:
    """A schema bound; integer limits of 64-bit fields are rendered as floats (2**63 - 1 prints
    as 9.223372036854776e18), so they are read back as the exact limit they stand for."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    if json_type != "integer":
        return value
    whole = int(value)
    if whole >= _UINT64 - 2**11:
        return _UINT64 - 1
    if whole >= _INT64 - 2**10:
        return _INT64 - 1
    if whole <= -_INT64:
        return -_INT64
    return whole
