"""A contract may exempt an optional field from the field-effect gate (`effect: none`), and only
with its reason; the gate spec ships, loads and resolves to the check kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from omniqual.checks.field_effect import FieldEffectCheck, FieldEffectParams
from omniqual.checks.registry import resolve
from omniqual.domain.gate import GateSpec
from omniqual.specs.contracts import load_contract
from omniqual.specs.source import SpecError, load_spec

ROOT = Path(__file__).resolve().parents[4]

CONTRACT = """\
schema_version: 1
model: m
official: diffusers==0.40.0 test
checkpoint: omniqual bundled m
target_release: "0.30.0"
endpoints:
  - api_mode: images-generations
    task: t2i
    probe: {prompt: a cube}
    fields:
      - {name: prompt, type: str, required: true}
      - FIELD
    output: {kind: image}
"""


def _load(tmp_path: Path, field: str) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(CONTRACT.replace("FIELD", field))
    load_contract(path)


def test_an_exemption_names_its_reason(tmp_path: Path) -> None:
    _load(tmp_path, "{name: user, type: str, effect: none, effect_reason: logs only}")
    with pytest.raises(SpecError) as caught:
        _load(tmp_path, "{name: user, type: str, effect: none}")
    assert "effect_reason" in str(caught.value)
    with pytest.raises(SpecError) as caught:
        _load(tmp_path, "{name: user, type: str, effect_reason: logs only}")
    assert "effect: none" in str(caught.value)


def test_the_gate_ships_and_resolves_to_its_kind() -> None:
    spec, _ = load_spec(ROOT / "gates" / "field-effect.yaml", GateSpec)
    assert (spec.id, spec.kind) == ("field-effect", "field_effect")
    assert resolve(spec.kind) is FieldEffectCheck
    FieldEffectParams.model_validate(spec.params)
