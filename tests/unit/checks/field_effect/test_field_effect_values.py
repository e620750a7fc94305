"""Which requests the field-effect gate builds from a contract (pure): each field that should act
is sent at a second legal value other than the probe's (or, left out of the probe, other than its
official default), cheap where the field sets the work; exempt fields are not sent; the defaults
check omits exactly the fields with an official default and states each at it."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import JsonValue

from omniqual.checks.api_contract.cases import parse_size
from omniqual.checks.field_effect.values import defaults_plan, effect_plan, other_value
from omniqual.domain.contract import EndpointContract, FieldContract
from omniqual.specs.contracts import load_contract
from tests.unit.checks.field_effect.field_fake import CONTRACTS

ROOT = Path(__file__).resolve().parents[4]


def _field(**spec: object) -> FieldContract:
    return FieldContract.model_validate({"name": "f", "source": "test", **spec})


@pytest.mark.parametrize(
    ("spec", "before", "after"),
    [
        ({"type": "int", "min": 1, "max": 200}, 2, 3),  # steps: one more, cheap
        ({"type": "int", "min": 1, "max": 4}, 4, 3),  # at the maximum: one less
        ({"type": "size", "min": 16, "max": 512, "multiple_of": 16}, "32x32", "48x48"),
        ({"type": "size", "min": 16, "max": 512, "multiple_of": 16}, "512x512", "496x496"),
        ({"type": "float", "min": 0, "max": 20}, 4.0, 9.0),  # a quarter of the range away
        ({"type": "float", "min": 0, "max": 20}, 18.0, 13.0),
        ({"type": "float", "unbounded": "test"}, 2.0, 3.0),
        ({"type": "str", "enum": ["png", "jpeg", "webp"]}, "png", "jpeg"),
        ({"type": "bool"}, True, False),
        ({"type": "bool"}, None, True),
        ({"type": "str", "example": "cpu"}, None, "cpu"),
    ],
)
def test_the_second_value_is_legal_and_other(
    spec: dict[str, object], before: JsonValue, after: JsonValue
) -> None:
    assert other_value(_field(**spec), before) == after


def test_free_text_gets_some_other_text() -> None:
    value = other_value(_field(type="str"), None)
    assert isinstance(value, str) and value.strip()
    assert other_value(_field(type="str"), value) != value


def test_a_field_left_out_of_the_probe_changes_away_from_its_official_default() -> None:
    endpoint = load_contract(CONTRACTS / "fake.yaml").endpoints[0]
    spec = endpoint.field("num_inference_steps")
    assert spec is not None
    bare = endpoint.model_copy(update={"probe": {"prompt": "a red cube"}})
    change = next(c for c in effect_plan(bare).changes if c.field == "num_inference_steps")
    assert change.before is None and change.after == 5  # the default 4 would change nothing
    assert "num_inference_steps" not in bare.probe


def test_the_effect_plan_exempts_fields_that_say_so() -> None:
    endpoint = load_contract(CONTRACTS / "fake.yaml").endpoints[0]
    plan = effect_plan(endpoint)
    assert [c.field for c in plan.changes] == [
        "size", "n", "num_inference_steps", "guidance_scale", "seed", "negative_prompt",
    ]  # fmt: skip
    assert {e.field: e.reason for e in plan.exempt} == {
        "response_format": "the same image in JSON or as a raw file",
        "user": "an end-user id for the logs only",
    }
    for change in plan.changes:
        others = {k: v for k, v in change.values.items() if k != change.field}
        assert others == {k: v for k, v in endpoint.probe.items() if k != change.field}


def test_the_defaults_plan_judges_each_steered_default_alone_and_the_rest_together() -> None:
    endpoint = load_contract(CONTRACTS / "fake.yaml").endpoints[0]
    plan = defaults_plan(endpoint)
    probe = {"prompt": "a red cube", "size": "32x32", "n": 1, "num_inference_steps": 2,
             "guidance_scale": 4.0, "seed": 7}  # fmt: skip
    *steered, joint = plan.groups
    # The probe states these away from their defaults: each is left out alone.
    assert [g.fields[0].name for g in steered] == ["size", "num_inference_steps", "guidance_scale"]
    size = steered[0]
    assert size.steered and size.omitted == {k: v for k, v in probe.items() if k != "size"}
    assert size.stated == {**probe, "size": "48x48"}
    # The probe leaves these at their defaults (n) or out (response_format): judged together.
    assert not joint.steered and [f.name for f in joint.fields] == ["n", "response_format"]
    assert joint.omitted == {k: v for k, v in probe.items() if k != "n"}
    assert joint.stated == {**probe, "response_format": "b64_json"}
    assert [f.name for f in plan.defaulted] == [
        "size", "num_inference_steps", "guidance_scale", "n", "response_format"]  # fmt: skip
    assert plan.unknown == ("seed", "negative_prompt", "user")


def _within(spec: FieldContract, value: JsonValue) -> bool:
    numbers: list[float]
    if spec.type == "size" and isinstance(value, str):
        numbers = [float(side) for side in parse_size(value)]
    elif isinstance(value, int | float) and not isinstance(value, bool):
        numbers = [float(value)]
    else:
        return spec.enum is None or value in spec.enum
    return all(
        (spec.min is None or n >= spec.min)
        and (spec.max is None or n <= spec.max)
        and (spec.type == "float" or spec.aligned(int(n)))
        for n in numbers
    )


@pytest.mark.parametrize("path", sorted((ROOT / "gates" / "contracts").glob("*.yaml")),
                         ids=lambda p: p.stem)  # fmt: skip
def test_every_shipped_contract_gets_legal_changes(path: Path) -> None:
    for endpoint in load_contract(path).endpoints:
        _legal_changes(endpoint)


def _legal_changes(endpoint: EndpointContract) -> None:
    for change in effect_plan(endpoint).changes:
        spec = endpoint.field(change.field)
        assert spec is not None and not spec.required
        assert change.after != change.before and change.after is not None, change
        assert change.after != (change.before if change.before is not None else spec.default)
        assert _within(spec, change.after), (endpoint.api_mode, change)
