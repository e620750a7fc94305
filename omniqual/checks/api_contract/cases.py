"""Boundary cases generated from a contract (pure and deterministic): for every accepted boundary
its rejected neighbour (SKILL Gate 0, api-and-recipes "add the neighbouring rejected values").

Per field: smallest and largest legal value and min-1 / max+1 (an aligned step for aligned
fields, ``step`` for floats), a misaligned value, a wrong type, a missing required field, an
empty and a whitespace-only value for a required string, every enum value and an unknown one, the
shortest legal string and a too-short one, and a legal value of an optional field that the probe
leaves out and no boundary sends (``present``). Per file input: the most inputs allowed and one
more, none where some are required, one where none is allowed, an upload one byte over the cap,
the most uploads, each under it, that pass an aggregate cap together, a valid PNG header declaring
more pixels than a decoded-pixel cap over a tiny body, and bytes that do not match their declared
MIME type. Every other field keeps its tiny probe
value, so accepted cases stay cheap on a CPU. Every declared limit is probed: nothing is skipped.
"""

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

from pydantic import JsonValue

from omniqual.domain.contract import (
    MULTIPART_MODES,
    EndpointContract,
    FieldContract,
    InputContract,
)

Expect = Literal["accepted", "invalid", "payload", "limit"]
"""``limit``: a decoded-media limit, which S0 lets answer 400 or 413 (SKILL G0-14)."""
FileContent = Literal["png", "oversize-png", "not-image", "marked-png", "huge-header-png"]
EXPECTED_STATUS: dict[Expect, str] = {
    "accepted": "2xx",
    "invalid": "400",
    "payload": "413",
    "limit": "400/413",
}
_DEFAULT_FLOAT_STEP = 0.1
_PRESENT_SIDE = 64  # an unbounded size's present case: as tiny as every probe's


@dataclass(frozen=True, slots=True)
class UploadFile:
    field: str
    content: FileContent
    media_type: str
    size: int = 0
    """Byte size for ``oversize-png``; the others are small fixtures."""
    marker: str = ""
    """Text a ``marked-png`` carries in a tEXt chunk (a log canary)."""
    side: int = 0
    """Width and height a ``huge-header-png`` declares (its body stays tiny)."""


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    api_mode: str
    field: str | None
    kind: str
    values: Mapping[str, JsonValue]
    """Every field value sent (the probe with this case's change applied)."""
    expect: Expect
    files: tuple[UploadFile, ...] = ()
    sent: str = ""
    """A short, redacted rendering of what this case changes (never a prompt or payload)."""

    @property
    def expected_status(self) -> str:
        return EXPECTED_STATUS[self.expect]


def probe_files(endpoint: EndpointContract) -> tuple[UploadFile, ...]:
    return tuple(
        UploadFile(spec.field, "png", spec.media_types[0])
        for spec in endpoint.inputs
        for _ in range(spec.probe_count)
    )


def generate_cases(endpoint: EndpointContract) -> tuple[Case, ...]:
    """Every case for one endpoint: the probe first, then fields, then inputs."""
    probe = Case(
        f"{endpoint.api_mode}/probe",
        endpoint.api_mode,
        None,
        "probe",
        dict(endpoint.probe),
        "accepted",
        probe_files(endpoint),
        "the probe request",
    )
    cases = [probe]
    for spec in endpoint.fields:
        own = list(_field_cases(endpoint, spec))
        cases.extend(own)
        sent_legal = spec.name in endpoint.probe or any(c.expect == "accepted" for c in own)
        if not sent_legal:
            cases.append(_case(endpoint, spec, "present", _legal_value(spec), "accepted"))
    for spec_input in endpoint.inputs:
        cases.extend(_input_cases(endpoint, spec_input))
    return tuple(cases)


def _case(
    endpoint: EndpointContract,
    spec: FieldContract,
    kind: str,
    value: JsonValue,
    expect: Expect,
    *,
    omit: bool = False,
) -> Case:
    values = {k: v for k, v in endpoint.probe.items() if k != spec.name}
    if not omit:
        values[spec.name] = value
    sent = f"{spec.name} omitted" if omit else f"{spec.name}={render_value(spec.name, value)}"
    return Case(
        f"{endpoint.api_mode}/{spec.name}/{kind}",
        endpoint.api_mode,
        spec.name,
        kind,
        values,
        expect,
        probe_files(endpoint),
        sent,
    )


def _field_cases(endpoint: EndpointContract, spec: FieldContract) -> Iterator[Case]:
    if spec.required:
        yield _case(endpoint, spec, "missing", None, "invalid", omit=True)
    wrong = _wrong_type(spec, endpoint.api_mode in MULTIPART_MODES)
    if wrong is not None:
        yield _case(endpoint, spec, "wrong-type", wrong, "invalid")
    if spec.type == "str" and spec.required:
        # A required text field must carry text: "" and "   " are missing values in disguise.
        yield _case(endpoint, spec, "empty", "", "invalid")
        yield _case(endpoint, spec, "whitespace", "   ", "invalid")
    if spec.type == "str":
        yield from _str_cases(endpoint, spec)
    elif spec.type in ("int", "float", "size"):
        yield from _number_cases(endpoint, spec)


def _wrong_type(spec: FieldContract, multipart: bool) -> JsonValue:
    if spec.type in ("int", "float"):
        return "not-a-number"
    if spec.type == "size":
        return "not-a-size"
    if spec.type == "bool":
        return "not-a-bool"
    return None if multipart else 12345  # a form field is text whatever it holds


def _str_cases(endpoint: EndpointContract, spec: FieldContract) -> Iterator[Case]:
    if spec.enum is not None:
        for value in spec.enum:
            if endpoint.probe.get(spec.name) != value:  # the probe already sends this one
                yield _case(endpoint, spec, f"enum={value}", value, "accepted")
        yield _case(endpoint, spec, "enum-unknown", "omniqual-unknown-value", "invalid")
    if spec.min_length is not None:
        yield _case(endpoint, spec, "min-length", "x" * spec.min_length, "accepted")
        yield _case(endpoint, spec, "too-short", "x" * (spec.min_length - 1), "invalid")


def _legal_value(spec: FieldContract) -> JsonValue:
    """A value of an optional field that no declared limit forbids, for the ``present`` case of a
    field that neither the probe nor any boundary case sends legally: without it a server that
    refuses the field (a 422 for ``negative_prompt``) would pass. The contract's ``example`` or
    official default is legal by its word, so either is preferred; a bool is legal either way;
    free text gets a plain word (a text field whose legal values are narrower, such as a device
    name, must say so: ``enum``, ``default`` or ``example``); an unbounded number starts at its
    alignment offset (zero)."""
    if spec.example is not None:
        return spec.example
    if spec.default is not None:
        return spec.default
    if spec.type == "bool":
        return True
    if spec.type == "str":
        return "omniqual"
    if spec.type == "float":
        return 0.0
    if spec.type == "size":
        side = _legal(spec, _PRESENT_SIDE, up=True)
        return f"{int(side)}x{int(side)}"
    return spec.offset


def _number_cases(endpoint: EndpointContract, spec: FieldContract) -> Iterator[Case]:
    if spec.min is not None:
        low = _legal(spec, spec.min, up=True)
        yield _case(endpoint, spec, "min", _shaped(endpoint, spec, low), "accepted")
        yield _case(
            endpoint, spec, "below-min", _shaped(endpoint, spec, _below(spec, low)), "invalid"
        )
    if spec.max is not None:
        high = _legal(spec, spec.max, up=False)
        yield _case(endpoint, spec, "max", _shaped(endpoint, spec, high), "accepted")
        yield _case(
            endpoint, spec, "above-max", _shaped(endpoint, spec, _above(spec, high)), "invalid"
        )
    if spec.multiple_of is not None:
        base = _probe_number(endpoint, spec)
        if base is None and spec.min is not None:
            base = _legal(spec, spec.min, up=True)  # no probe value: start at the smallest legal
        if base is not None:
            odd = int(base) + max(1, spec.multiple_of // 2)
            expect: Expect = "invalid" if spec.misaligned == "reject" else "accepted"
            yield _case(endpoint, spec, "misaligned", _shaped(endpoint, spec, odd), expect)


def _legal(spec: FieldContract, bound: float, *, up: bool) -> float:
    """The smallest (up) or largest legal value at a bound, respecting alignment."""
    if spec.type == "float" or spec.multiple_of is None:
        return bound
    m, off = spec.multiple_of, spec.offset
    k = math.ceil((bound - off) / m) if up else math.floor((bound - off) / m)
    return k * m + off


def _distance(spec: FieldContract) -> float:
    if spec.type == "float":
        return spec.step or _DEFAULT_FLOAT_STEP
    # One alignment step out: a rejecting field then breaks only the range rule, and a flooring
    # field cannot floor its neighbour back onto the legal extreme (126 -> 125 for 4k+1).
    # Whole numbers stay ints: 2**63 - 1 plus a float 1.0 would round back onto 2**63.
    return spec.multiple_of if spec.multiple_of else 1


def _below(spec: FieldContract, low: float) -> float:
    if spec.type != "float" and spec.misaligned == "floor":
        return low - 1  # floors below the minimum, so min-1 is already a rejected value
    return low - _distance(spec)


def _above(spec: FieldContract, high: float) -> float:
    return high + _distance(spec)


def _probe_number(endpoint: EndpointContract, spec: FieldContract) -> float | None:
    value = endpoint.probe.get(spec.name)
    if spec.type == "size" and isinstance(value, str):
        return float(parse_size(value)[0])
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _shaped(endpoint: EndpointContract, spec: FieldContract, number: float) -> JsonValue:
    """The wire value: ints as ints, floats rounded, a size varies its width only (the height
    keeps its probe value, so a large legal width stays cheap)."""
    if spec.type == "float":
        return round(number, 6)
    if spec.type == "size":
        probe = endpoint.probe.get(spec.name)
        height = parse_size(probe)[1] if isinstance(probe, str) else int(number)
        return f"{int(number)}x{height}"
    return int(number)


def parse_size(text: str) -> tuple[int, int]:
    width, _, height = text.lower().partition("x")
    return int(width), int(height)


def _input_cases(endpoint: EndpointContract, spec: InputContract) -> Iterator[Case]:
    others = tuple(f for f in probe_files(endpoint) if f.field != spec.field)
    media = spec.media_types[0]

    def make(kind: str, files: tuple[UploadFile, ...], expect: Expect, sent: str) -> Case:
        return Case(
            f"{endpoint.api_mode}/{spec.field}/{kind}",
            endpoint.api_mode,
            spec.field,
            kind,
            dict(endpoint.probe),
            expect,
            others + files,
            sent,
        )

    def valid(count: int) -> tuple[UploadFile, ...]:
        return tuple(UploadFile(spec.field, "png", media) for _ in range(count))

    if spec.max_count == 0:
        yield make("unexpected-input", valid(1), "invalid", f"1 {spec.field} ({media})")
        return
    if spec.min_count >= 1:
        yield make("missing-input", (), "invalid", f"no {spec.field}")
    yield make("max-inputs", valid(spec.max_count), "accepted", f"{spec.max_count} {spec.field}")
    yield make(
        "too-many-inputs",
        valid(spec.max_count + 1),
        "invalid",
        f"{spec.max_count + 1} {spec.field}",
    )
    count = max(1, spec.probe_count)
    if spec.max_bytes is not None:
        big = UploadFile(spec.field, "oversize-png", media, spec.max_bytes + 1)
        yield make(
            "oversize",
            (big, *valid(count - 1)),
            "payload",
            f"{spec.field} of {spec.max_bytes + 1} bytes (cap {spec.max_bytes})",
        )
    if spec.max_total_bytes is not None:
        # Every file within the per-file cap (the spec loader checks one exists), the sum over.
        each = spec.max_total_bytes // spec.max_count + 1
        yield make(
            "aggregate-oversize",
            tuple(
                UploadFile(spec.field, "oversize-png", media, each) for _ in range(spec.max_count)
            ),
            "payload",
            f"{spec.max_count} {spec.field} of {each} bytes each "
            f"(cap {spec.max_total_bytes} in all)",
        )
    if spec.max_pixels is not None:
        side = math.isqrt(spec.max_pixels) + 1
        bomb = UploadFile(spec.field, "huge-header-png", media, side=side)
        yield make(
            "pixel-bomb",
            (bomb, *valid(count - 1)),
            "limit",
            f"{spec.field}: a PNG header of {side}x{side} px over a tiny body "
            f"(cap {spec.max_pixels} px)",
        )
    fake = UploadFile(spec.field, "not-image", media)
    yield make(
        "mime-mismatch",
        (fake, *valid(count - 1)),
        "invalid",
        f"{spec.field}: PDF bytes labelled {media}",
    )


_SECRET_FIELDS = frozenset({"prompt", "input", "negative_prompt", "messages"})


def render_value(name: str, value: JsonValue) -> str:
    """Short and redacted: prompts show only their length, long values are cut."""
    if name in _SECRET_FIELDS and isinstance(value, str):
        return "<whitespace only>" if value and not value.strip() else f"<{len(value)} chars>"
    text = repr(value)
    return text if len(text) <= 48 else text[:45] + "..."


@dataclass(frozen=True, slots=True)
class CasePlan:
    """Cases in run order: rejections first (Gate 0: prove rejection has no side effects before
    any positive request), then accepted ones."""

    rejected: tuple[Case, ...]
    accepted: tuple[Case, ...]


def plan_cases(endpoints: tuple[EndpointContract, ...]) -> CasePlan:
    every = [case for endpoint in endpoints for case in generate_cases(endpoint)]
    return CasePlan(
        rejected=tuple(c for c in every if c.expect != "accepted"),
        accepted=tuple(c for c in every if c.expect == "accepted"),
    )
