"""Loading model contracts (gates/contracts/*.yaml): the bundled ones load, and every malformed
spec is a SpecError that points at the file and line of the problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from omniqual.specs.contracts import contract_path, load_contract
from omniqual.specs.source import SpecError

ROOT = Path(__file__).resolve().parents[3]
BUNDLED = [
    "sd3-tiny",
    "qwen-image-tiny",
    "qwen-image-edit-tiny",
    "wan-t2v-tiny",
    "stable-audio-tiny",
]

VALID = """\
schema_version: 1
model: m
official: diffusers X
checkpoint: tiny
target_release: "0.30.0"
endpoints:
  - api_mode: images-generations
    task: t2i
    probe: {prompt: p, size: 64x64}
    fields:
      - {name: prompt, type: str, required: true}
      - {name: size, type: size, min: 16, max: 1024, multiple_of: 16}
    output: {kind: image, size_field: size}
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "m.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("model", BUNDLED)
def test_bundled_contracts_load(model: str) -> None:
    contract = load_contract(contract_path(ROOT / "gates" / "contracts", model))
    assert contract.model == model
    assert contract.endpoints and all(e.fields for e in contract.endpoints)
    assert all("x" in str(e.probe.get("size", "64x64")) for e in contract.endpoints)


def test_valid_minimal_contract(tmp_path: Path) -> None:
    contract = load_contract(_write(tmp_path, VALID))
    endpoint = contract.endpoint("images-generations")
    assert endpoint is not None and endpoint.path == "/v1/images/generations"
    size = endpoint.field("size")
    assert size is not None and size.aligned(64) and not size.aligned(72)


@pytest.mark.parametrize(
    ("old", "new", "line", "message"),
    [
        ("min: 16, max: 1024", "min: 2048, max: 1024", 12, "greater than max"),
        ("type: size, min", "type: sizes, min", 12, "Input should be"),
        ("probe: {prompt: p, size: 64x64}", "probe: {size: 64x64}", 9, "required field 'prompt'"),
        (
            "probe: {prompt: p, size: 64x64}",
            "probe: {prompt: p, size: 64x64, steps: 2}",
            9,
            "not a declared field",
        ),
        (
            "output: {kind: image, size_field: size}",
            "output: {kind: image, size_field: sz}",
            13,
            "'sz' is not a field",
        ),
        (
            "max: 1024, multiple_of: 16}",
            "max: 1024, multiple_of: 16, max_probe: skip}",
            12,
            "needs a reason",
        ),
        ("model: m", "model: other", 2, "must match the file name"),
        ("task: t2i", "task: t2i\n    extra: 1", 9, "Extra inputs"),
    ],
)
def test_malformed_contract_names_file_and_line(
    tmp_path: Path, old: str, new: str, line: int, message: str
) -> None:
    assert old in VALID
    path = _write(tmp_path, VALID.replace(old, new))
    with pytest.raises(SpecError) as raised:
        load_contract(path)
    text = str(raised.value)
    assert f"{path}:{line}:" in text, text
    assert message in text


def test_missing_contract_is_a_spec_error(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="file not found"):
        load_contract(tmp_path / "absent.yaml")
