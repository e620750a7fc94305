"""The isolation request set: each ``RequestVariant`` applied to the row's contract probe, with
every knob mapped to the field the contract names for it (seed, prompt, size, steps, guidance,
output count, format, frames, audio length, edit input). A knob the contract does not list, or
a value it does not accept, keeps the probe's value and is recorded as not varied. Settings are
rendered for reasons without prompt text (``prompt#1``) or payloads."""

from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import JsonValue

from omniqual.checks.api_contract.cases import Case, parse_size
from omniqual.checks.api_contract.outputs import Expected, expected_output
from omniqual.checks.api_contract.wire import WireRequest, build_request, form_text
from omniqual.checks.isolation.params import RequestVariant
from omniqual.checks.synthetic_inputs import variant_png
from omniqual.domain.contract import ENDPOINT_PATHS, EndpointContract, FieldContract, ModelContract

TWIN_MODE = {"videos-async": "videos-sync", "videos-sync": "videos-async"}
"""The other transport of the same video computation (the ``mixed`` arrival pattern)."""


@dataclass(frozen=True, slots=True)
class IsoRequest:
    label: str
    api_mode: str
    values: Mapping[str, JsonValue]
    settings: tuple[tuple[str, str], ...]
    """(knob, rendered value) of every knob varied: what reasons name."""
    expected: Expected
    input_png: bytes | None = None
    not_varied: tuple[str, ...] = field(default=())

    def wire(self, api_mode: str | None = None) -> WireRequest:
        """The HTTP request, on the row's endpoint or (``mixed``) on its twin."""
        mode = api_mode or self.api_mode
        case = Case(f"isolation/{self.label}", mode, None, "isolation", dict(self.values),
                    "accepted", (), self.label)  # fmt: skip
        wire = build_request(case)
        if self.input_png is None:
            return wire
        data = {k: form_text(v) for k, v in self.values.items() if v is not None}
        part = ("image", (f"input_{self.label}.png", self.input_png, "image/png"))
        return WireRequest("POST", ENDPOINT_PATHS[mode], data=data, files=(part,))

    def setting(self, knob: str) -> str | None:
        return dict(self.settings).get(knob)


def differing(a: IsoRequest, b: IsoRequest) -> list[str]:
    """The knobs in which two requests differ (``steps``, ``seed``…), in knob order."""
    left, right = dict(a.settings), dict(b.settings)
    return [k for k in dict.fromkeys([*left, *right]) if left.get(k) != right.get(k)]


def _knob_fields(endpoint: EndpointContract) -> dict[str, str | None]:
    out = endpoint.output
    prompt = next((name for name in ("prompt", "input") if endpoint.field(name)), None)
    return {"seed": "seed", "prompt": prompt, "size": out.size_field,
            "steps": "num_inference_steps", "guidance": "guidance_scale",
            "true_cfg": "true_cfg_scale", "n": out.count_field,
            "output_format": out.format_field, "frames": out.frames_field,
            "length_s": out.length_field}  # fmt: skip


def _accepts(spec: FieldContract, value: JsonValue) -> bool:
    if spec.enum is not None:
        return isinstance(value, str) and value in spec.enum
    if spec.type == "str":
        return isinstance(value, str) and len(value.strip()) >= (spec.min_length or 1)
    numbers: list[float] = []
    if spec.type == "size" and isinstance(value, str):
        numbers = list(parse_size(value))
        if not all(spec.aligned(int(n)) for n in numbers):
            return False
    elif isinstance(value, int | float) and not isinstance(value, bool):
        numbers = [value]
        if spec.type == "int" and not spec.aligned(int(value)):
            return False
    else:
        return False
    low = spec.min if spec.min is not None else -float("inf")
    high = spec.max if spec.max is not None else float("inf")
    return all(low <= n <= high for n in numbers)


def build_request_set(contract: ModelContract, api_mode: str, variants: tuple[RequestVariant, ...],
                      prompts: tuple[str, ...]) -> list[IsoRequest]:  # fmt: skip
    endpoint = contract.endpoint(api_mode)
    if endpoint is None:
        raise ValueError(f"contract {contract.model!r} has no endpoint {api_mode!r}")
    knobs = _knob_fields(endpoint)
    edits = any(spec.field == "image" and spec.probe_count for spec in endpoint.inputs)
    built = []
    for variant in variants:
        values: dict[str, JsonValue] = dict(endpoint.probe)
        settings: list[tuple[str, str]] = []
        skipped: list[str] = []
        for knob, name in knobs.items():
            raw = getattr(variant, knob)
            if raw is None:
                continue
            value: JsonValue = prompts[raw] if knob == "prompt" else raw
            spec = endpoint.field(name) if name else None
            if spec is None or not _accepts(spec, value):
                skipped.append(knob)
                continue
            values[spec.name] = value
            settings.append((knob, f"#{raw}" if knob == "prompt" else str(raw)))
        png = None
        if edits:
            index = variant.input_image or 0
            png = variant_png(index)
            settings.append(("input_image", f"#{index}"))
        elif variant.input_image is not None:
            skipped.append("input_image")
        expected = expected_output(endpoint, values)
        built.append(IsoRequest(variant.label, api_mode, values, tuple(settings), expected, png,
                                tuple(skipped)))  # fmt: skip
    return built


def render(request: IsoRequest, knobs: list[str]) -> str:
    """``steps=4, seed=11`` for the knobs named (prompts as ``prompt=#1``)."""
    return ", ".join(f"{k}={request.setting(k)}" for k in knobs if request.setting(k) is not None)
