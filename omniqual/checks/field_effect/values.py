"""The requests the field-effect gate sends, built from a contract endpoint (pure, deterministic).

Effects (SKILL G0-23): every optional field that should change the output (all but those the
contract marks ``effect: none``, each with its reason) is sent at a second legal value, everything
else at the probe's values (same seed). The second value differs from what the field would be
without the change: the probe's value, else the official default (stating the default would
rightly change nothing), else the field is simply added. It is cheap where the field sets the
work (one more step, one alignment step more per side) and far where it only steers (a float moves
a quarter of its declared range), so a real effect stands well clear of any run-to-run spread.

Defaults (SKILL G0-03): a request leaving fields with an official default out, against the same
request stating each at that default, in groups. A field the probe states at a value other than
its default (the probe's small size, its few steps) is judged alone, every other field at the
probe's value: left out it runs at its official default, and leaving the size and the steps out
together would make one request of the official 1024x1024 at 28 steps where the size alone costs
the same 1024x1024 at the probe's 2 (on CPU the VAE at that size is most of the time) and the
steps alone cost 28 steps at the probe's size. Every other defaulted field (left out of the
probe, or stated at its default) is judged in one joint group. Fields without a declared default
keep their probe value in every request (the seed) or stay out of all of them, and are recorded
as not checked."""

import math
from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import JsonValue

from omniqual.checks.api_contract.cases import parse_size
from omniqual.domain.contract import EndpointContract, FieldContract

OTHER_TEXT = "omniqual field-effect: another legal text"
"""A plain text a free-text field takes (a narrower field says so: enum, example, default)."""
_UNBOUNDED_FLOAT_STEP = 1.0
SINGLE_VALUE = "the contract allows one value only: there is no second legal value to send"


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One field at a second legal value; ``values`` is the probe with that change applied."""

    field: str
    before: JsonValue
    """The probe's value, or None when the probe leaves the field out."""
    after: JsonValue
    values: Mapping[str, JsonValue]


@dataclass(frozen=True, slots=True)
class Exempt:
    field: str
    reason: str


@dataclass(frozen=True, slots=True)
class EffectPlan:
    changes: tuple[FieldChange, ...]
    exempt: tuple[Exempt, ...]


@dataclass(frozen=True, slots=True)
class DefaultsGroup:
    """Defaulted fields judged together: ``omitted`` leaves them out, ``stated`` states each at
    its official default; every other field is at the probe's value in both."""

    fields: tuple[FieldContract, ...]
    omitted: Mapping[str, JsonValue]
    steered: bool
    """One field the probe states away from its default, judged alone."""

    @property
    def stated(self) -> Mapping[str, JsonValue]:
        return {**self.omitted, **{spec.name: spec.default for spec in self.fields}}


@dataclass(frozen=True, slots=True)
class DefaultsPlan:
    groups: tuple[DefaultsGroup, ...]
    """Each steered field alone, in contract order, then the joint group (when it has fields)."""
    unknown: tuple[str, ...]
    """Optional fields without an official default in the contract: not checked."""

    @property
    def defaulted(self) -> tuple[FieldContract, ...]:
        return tuple(spec for group in self.groups for spec in group.fields)


def effect_plan(endpoint: EndpointContract) -> EffectPlan:
    changes: list[FieldChange] = []
    exempt: list[Exempt] = []
    for spec in endpoint.fields:
        if spec.required:
            continue
        if spec.effect == "none":
            exempt.append(Exempt(spec.name, spec.effect_reason))
            continue
        before = endpoint.probe.get(spec.name)
        after = other_value(spec, before if before is not None else spec.default)
        if after is None:
            exempt.append(Exempt(spec.name, SINGLE_VALUE))
            continue
        values = {**endpoint.probe, spec.name: after}
        changes.append(FieldChange(spec.name, before, after, values))
    return EffectPlan(tuple(changes), tuple(exempt))


def defaults_plan(endpoint: EndpointContract) -> DefaultsPlan:
    optional = [spec for spec in endpoint.fields if not spec.required]
    defaulted = [spec for spec in optional if spec.default is not None]
    probe = endpoint.probe
    steered = [spec for spec in defaulted
               if spec.name in probe and probe[spec.name] != spec.default]  # fmt: skip
    groups = [DefaultsGroup((spec,), _without(probe, (spec,)), steered=True) for spec in steered]
    joint = tuple(spec for spec in defaulted if spec not in steered)
    if joint:
        groups.append(DefaultsGroup(joint, _without(probe, joint), steered=False))
    unknown = tuple(spec.name for spec in optional if spec.default is None)
    return DefaultsPlan(tuple(groups), unknown)


def _without(
    probe: Mapping[str, JsonValue], fields: tuple[FieldContract, ...]
) -> dict[str, JsonValue]:
    names = {spec.name for spec in fields}
    return {k: v for k, v in probe.items() if k not in names}


def other_value(spec: FieldContract, current: JsonValue) -> JsonValue:
    """A legal value of ``spec`` other than ``current`` (None: the field is absent)."""
    if spec.enum is not None:
        return next((value for value in spec.enum if value != current), None)
    if spec.type == "bool":
        return not current if isinstance(current, bool) else True
    if spec.type == "str":
        if spec.example is not None and spec.example != current:
            return spec.example
        text = OTHER_TEXT.ljust(spec.min_length or 0, ".")
        return text if text != current else text + " (again)"
    if spec.type == "size":
        return _other_size(spec, current)
    if spec.type == "int":
        base = current if isinstance(current, int) and not isinstance(current, bool) else None
        return _other_int(spec, base)
    base_float = float(current) if isinstance(current, int | float) else None
    return _other_float(spec, base_float)


def _start(spec: FieldContract) -> float:
    """Where a field without a current value starts: its example, the minimum, else zero."""
    if isinstance(spec.example, int | float) and not isinstance(spec.example, bool):
        return float(spec.example)
    return float(spec.min) if spec.min is not None else 0.0


def _legal(spec: FieldContract, value: float) -> bool:
    return (spec.min is None or value >= spec.min) and (spec.max is None or value <= spec.max)


def _other_int(spec: FieldContract, current: int | None) -> int:
    step = spec.multiple_of or 1
    if current is None:
        return int(_start(spec))
    up, down = current + step, current - step
    return up if _legal(spec, up) or not _legal(spec, down) else down


def _other_size(spec: FieldContract, current: JsonValue) -> str:
    step = spec.multiple_of or 1
    if not isinstance(current, str):
        side = max(int(_start(spec)), step)
        side = side if spec.aligned(side) else spec.floor_aligned(side) + step
        return f"{side}x{side}"
    width, height = parse_size(current)
    for delta in (step, -step):
        sides = (width + delta, height + delta)
        if all(_legal(spec, side) and side > 0 for side in sides):
            return f"{sides[0]}x{sides[1]}"
    return f"{width + step}x{height}"


def _other_float(spec: FieldContract, current: float | None) -> float:
    base = _start(spec) if current is None else current
    if spec.min is not None and spec.max is not None:
        delta = (float(spec.max) - float(spec.min)) / 4
    else:
        delta = max(spec.step or 0.0, abs(base) / 2, _UNBOUNDED_FLOAT_STEP)
    for candidate in (base + delta, base - delta):
        if _legal(spec, candidate) and math.isfinite(candidate):
            return round(candidate, 6)
    # A range too narrow for a quarter either way: the farther bound.
    low, high = float(spec.min or 0.0), float(spec.max or 0.0)
    return high if abs(high - base) >= abs(low - base) else low
