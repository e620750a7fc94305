"""An axis with a default: rows on it are keyed as before the axis existed, and still answer it."""

from pathlib import Path

import pytest
from pydantic import ValidationError

from omniqual.domain.axes import Axis, AxisCatalog, AxisValue, RowKey, Selector
from omniqual.domain.definition_of_done import (
    RowKind,
    correctness_gate,
    differing_axes,
    minimum_gates,
    recommendation_gates,
)
from omniqual.specs.matrix import load_catalog

ROOT = Path(__file__).resolve().parents[3]
VALUES = (AxisValue(name="none"), AxisValue(name="request-lora"))


def catalog() -> AxisCatalog:
    return AxisCatalog(
        axes=(
            Axis(name="model", description="m", open_ended=True),
            Axis(name="adapter", description="a", values=VALUES, default="none"),
        )
    )


def test_a_row_on_the_default_is_keyed_as_before_and_still_answers_the_axis() -> None:
    key = catalog().row_key({"model": "sd3-tiny"})
    assert str(key) == "model=sd3-tiny"
    assert key == RowKey.parse("model=sd3-tiny")  # a result recorded before the axis matches
    assert key == catalog().row_key({"model": "sd3-tiny", "adapter": "none"})
    assert key.get("adapter") == "none" and key.as_dict() == {"model": "sd3-tiny"}
    assert key.all_values() == {"model": "sd3-tiny", "adapter": "none"}
    assert Selector.parse("adapter=none").matches(key)
    assert not Selector.parse("adapter=request-lora").matches(key)


def test_a_row_off_the_default_names_the_axis_and_is_another_row() -> None:
    key = catalog().row_key({"model": "sd3-tiny", "adapter": "request-lora"})
    assert str(key) == "model=sd3-tiny;adapter=request-lora"
    assert key != catalog().row_key({"model": "sd3-tiny"})
    assert Selector.parse("adapter=request-lora").matches(key)
    assert catalog().problems({"model": "x", "adapter": "other"}) == [
        ("adapter", "unknown value 'other' for axis 'adapter' (none, request-lora)")
    ]


def test_a_default_must_be_one_of_the_axis_values() -> None:
    with pytest.raises(ValidationError, match="default 'some' is not one of"):
        Axis(name="adapter", description="a", values=VALUES, default="some")


def test_the_shipped_adapter_axis_renames_no_row() -> None:
    shipped = load_catalog(ROOT / "matrices" / "axes.yaml")
    assert shipped.defaults() == {"adapter": "none"}
    values = {a.name: a.values[0].name for a in shipped.axes if a.name != "adapter"}
    assert "adapter" not in str(shipped.row_key(values))


def test_an_adapter_candidate_is_proven_by_the_lora_gate_not_parity() -> None:
    assert correctness_gate(RowKind.CANDIDATE, ("adapter",)) == "lora"
    assert minimum_gates(RowKind.CANDIDATE, ("adapter",)) == ("lora",)
    assert recommendation_gates(RowKind.CANDIDATE, ("adapter",))[0] == "lora"
    # Any other axis, or a row more than one axis away, is held to parity.
    assert correctness_gate(RowKind.CANDIDATE, ("quantization",)) == "parity"
    assert correctness_gate(RowKind.CANDIDATE, ("adapter", "execution")) == "parity"
    assert correctness_gate(RowKind.BASELINE, ("adapter",)) == "reference-parity"
    assert differing_axes({"a": "1", "b": "2"}, {"a": "1", "b": "3", "c": "4"}) == ("b", "c")


def test_a_recorded_key_parsed_with_the_catalogue_defaults_answers_them() -> None:
    # Results record the string form: without the defaults an `adapter=none` selector (a perf
    # baseline's --row) would match none of them.
    recorded = str(catalog().row_key({"model": "sd3-tiny"}))
    assert not Selector.parse("adapter=none").matches(RowKey.parse(recorded))
    parsed = RowKey.parse(recorded, catalog().defaults())
    assert Selector.parse("adapter=none").matches(parsed)
    assert parsed == catalog().row_key({"model": "sd3-tiny"})
    lora = RowKey.parse("model=x;adapter=request-lora", catalog().defaults())
    assert lora.get("adapter") == "request-lora" and lora.implied == ()
