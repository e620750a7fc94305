"""Draft one endpoint of a model contract from the served schema and the official signature.

Every limit carries its source in ``source``; a limit neither source states (size bounds,
alignment, a model default the pipeline derives from its checkpoint) is written as a ``TODO``
string, which every spec loader reports as ``file:line: field: TODO …`` until it is replaced.
"""

import re
from dataclasses import dataclass
from typing import Any

from omniqual.engine.model_init.official import OfficialSignature
from omniqual.engine.model_init.openapi import EndpointSchema, SchemaField

CORE_FIELDS = frozenset(
    {
        "prompt",
        "n",
        "size",
        "response_format",
        "output_format",
        "output_compression",
        "seed",
        "negative_prompt",
        "num_inference_steps",
        "guidance_scale",
        "user",
        "generator_device",
        "vae_use_slicing",
        "vae_use_tiling",
        "num_frames",
        "fps",
        "audio_length",
        "audio_end_in_s",
    }
)
"""Request fields every diffusion endpoint of vLLM-Omni handles, whatever the pipeline."""
NEVER_DRAFTED = frozenset({"model", "extra_params", "lora", "stream", "stream_format"})
"""Routing and pass-through fields: no contract of their own."""
_TYPES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}
PROBE_PROMPT = "a red cube on a wooden table"
PROMPT_FIELDS = frozenset({"prompt", "input"})
"""The text a request generates from (the audio API calls it ``input``)."""
_PROSE_DEFAULT = re.compile(r"[Dd]efaults to '([^']+)'")


@dataclass(frozen=True, slots=True)
class EndpointDraft:
    fields: tuple[dict[str, Any], ...]
    probe: dict[str, Any]
    skipped: tuple[str, ...]
    """Schema fields left out of the draft (not the official pipeline's, or not scalar)."""
    files: tuple[SchemaField, ...]
    """File uploads of a multipart endpoint (drafted as ``inputs``)."""


def todo(what: str) -> str:
    return f"TODO: {what}"


def draft_endpoint(schema: EndpointSchema, official: OfficialSignature | None) -> EndpointDraft:
    fields: list[dict[str, Any]] = []
    skipped: list[str] = []
    files: list[SchemaField] = []
    for spec in schema.fields:
        if spec.json_type == "file":
            files.append(spec)
            continue
        kind = (
            "size"
            if spec.name == "size" and spec.json_type == "string"
            else _TYPES.get(spec.json_type)
        )
        wanted = (
            spec.required
            or spec.name in CORE_FIELDS
            or (official is None or official.default(spec.name)[0])
        )
        if kind is None or spec.name in NEVER_DRAFTED or not wanted:
            skipped.append(spec.name)
            continue
        fields.append(draft_field(schema, spec, kind, official))
    names = {f["name"] for f in fields}
    return EndpointDraft(tuple(fields), draft_probe(schema, names), tuple(skipped), tuple(files))


def draft_field(
    schema: EndpointSchema, spec: SchemaField, kind: str, official: OfficialSignature | None
) -> dict[str, Any]:
    where = f"schema {schema.schema_name}.{spec.name} (GET /openapi.json)"
    field: dict[str, Any] = {"name": spec.name, "type": kind}
    said: list[str] = []
    if spec.required:
        field["required"] = True
        said.append("required")
    _draft_default(field, spec, kind, official, said)
    if kind in ("int", "float"):
        for key, value in (("min", spec.minimum), ("max", spec.maximum)):
            if value is None:
                word = "smallest" if key == "min" else "largest"
                field[key] = todo(
                    f"the {word} legal value and its source (the schema gives "
                    f"no {'minimum' if key == 'min' else 'maximum'}), or delete it "
                    "and say in `unbounded` which source leaves it open"
                )
            else:
                field[key] = value
                said.append(f"{'ge' if key == 'min' else 'le'}={value}")
    elif kind == "size":
        field["min"] = todo(
            "smallest legal side in pixels (the schema gives no bound: see the "
            "official check_inputs and the checkpoint's config)"
        )
        field["max"] = todo("largest legal side in pixels (the schema gives no bound)")
        field["multiple_of"] = todo(
            "side alignment (e.g. vae_scale_factor * patch_size), or "
            "delete this line if any side is legal"
        )
        field["misaligned"] = todo(
            "reject or floor: what the official pipeline does with a misaligned side"
        )
    elif kind == "str":
        _draft_enum(field, spec, said)
    if kind == "size":
        field["source"] = todo(f"cite where the size limits come from ({where} states none)")
    elif said:
        field["source"] = f"{where}: {', '.join(said)}"
    else:
        field["source"] = f"{where}: {kind}, no limit stated"
    return field


def _draft_default(
    field: dict[str, Any],
    spec: SchemaField,
    kind: str,
    official: OfficialSignature | None,
    said: list[str],
) -> None:
    if spec.default is not None:
        field["default"] = spec.default
        said.append(f"default {spec.default!r}")
        return
    takes, value = official.default(spec.name) if official else (False, None)
    if kind == "size" and official is not None:
        value, takes = official.size_default(), True
    if takes and value is not None:
        field["default"] = value
        assert official is not None
        said.append(f"official default {value!r} ({official.label})")
    elif kind == "str" and (prose := _PROSE_DEFAULT.search(spec.description)) is not None:
        field["default"] = prose.group(1)
        said.append(f"default {prose.group(1)!r} from the schema's description (prose)")
    elif kind != "str" and "default" in spec.description.lower():
        # The server falls back on the model's own default: only the pipeline knows it.
        source = official.label if official else "the official pipeline (--official)"
        field["default"] = todo(
            f"the model's default (the server uses it when the field is "
            f"omitted; {source} does not fix it)"
        )


def _draft_enum(field: dict[str, Any], spec: SchemaField, said: list[str]) -> None:
    if spec.enum:
        field["enum"] = list(spec.enum)
        said.append(
            f"enum {list(spec.enum)} (the schema's; it may list values the server "
            "rejects: --probe checks)"
        )
        return
    choices = spec.prose_choices()
    if len(choices) >= 2 and "e.g." not in spec.description:
        field["enum"] = list(choices)
        said.append(
            f"enum {list(choices)} from the schema's description (prose: the schema "
            "does not enforce it)"
        )


def draft_probe(schema: EndpointSchema, names: set[str]) -> dict[str, Any]:
    """The cheapest request: the prompt, one output, two steps, the schema's first formats; a
    size only the contributor can choose (the smallest legal one)."""
    probe: dict[str, Any] = {}
    for spec in schema.fields:
        if spec.name not in names:
            continue
        if spec.name in PROMPT_FIELDS:
            probe[spec.name] = PROBE_PROMPT
        elif spec.required:
            probe[spec.name] = todo(f"a legal value of the required field {spec.name}")
    cheap: dict[str, Any] = {
        "n": 1,
        "num_outputs_per_prompt": 1,
        "num_inference_steps": 2,
        "seed": 1234,
    }
    for name, value in cheap.items():
        found = schema.field(name)
        if found is not None and name in names and _within(found, value):
            probe[name] = value
    for name, preferred in (("response_format", "b64_json"), ("output_format", "png")):
        found = schema.field(name)
        if (
            found is not None
            and name in names
            and preferred in (found.enum or found.prose_choices())
        ):
            probe[name] = preferred
    if "size" in names:
        probe["size"] = todo(
            "a small legal WIDTHxHEIGHT for every case's base request (e.g. "
            "64x64 on a tiny checkpoint)"
        )
    if "num_frames" in names:
        probe["num_frames"] = todo("a small legal frame count")
    return probe


def _within(spec: SchemaField, value: float) -> bool:
    return (spec.minimum is None or value >= spec.minimum) and (
        spec.maximum is None or value <= spec.maximum
    )
