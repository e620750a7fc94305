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
    "wan-i2v-tiny",
    "stable-audio-tiny",
]

VALID = """\
schema_version: 1
model: m
official: diffusers==0.40.0 X
checkpoint: omniqual bundled m
target_release: "0.30.0"
endpoints:
  - api_mode: images-generations
    task: t2i
    probe: {prompt: p, size: 64x64}
    fields:
      - {name: prompt, type: str, required: true}
      - {name: size, type: size, min: 16, max: 1024, multiple_of: 16, source: official}
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
            "max: 1024, multiple_of: 16, source: official}",
            "max: 1024, multiple_of: 16, max_probe: skip}",
            12,
            "Extra inputs",
        ),
        ("min: 16, max: 1024", "min: 16", 12, "no max: declare the range"),
        ("source: official}", "source: ' '}", 12, "names the source of its range"),
        (
            "min: 16, max: 1024, multiple_of: 16, source: official}",
            "min: 16, max: 1024, multiple_of: 16, source: official, unbounded: says X}",
            12,
            "it is not unbounded",
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


def test_unbounded_integer_is_a_spec_error_unless_a_source_says_so(tmp_path: Path) -> None:
    seed = VALID.replace(
        "    output:", "      - {name: seed, type: int, source: schema}\n    output:"
    )
    with pytest.raises(SpecError) as raised:
        load_contract(_write(tmp_path, seed))
    assert f"{tmp_path / 'm.yaml'}:13: endpoints.0.fields.2.min: no min or max" in str(raised.value)
    said = seed.replace("source: schema}", "source: schema, unbounded: schema says any int}")
    assert load_contract(_write(tmp_path, said)).endpoints[0].field("seed") is not None


def test_video_output_names_its_size_and_frames(tmp_path: Path) -> None:
    video = (
        VALID.replace("images-generations", "videos-sync")
        .replace("task: t2i", "task: t2v")
        .replace("output: {kind: image, size_field: size}", "output: {kind: video}")
    )
    with pytest.raises(SpecError) as raised:
        load_contract(_write(tmp_path, video))
    text = str(raised.value)
    assert "output.size_field: a video output names" in text
    assert "output.frames_field: a video output names" in text


@pytest.mark.parametrize("model", BUNDLED)
def test_bundled_numeric_fields_cite_their_range(model: str) -> None:
    contract = load_contract(contract_path(ROOT / "gates" / "contracts", model))
    for endpoint in contract.endpoints:
        for spec in endpoint.fields:
            if spec.type in ("int", "float", "size"):
                assert spec.source.strip(), f"{endpoint.api_mode}.{spec.name}"
                bounded = spec.min is not None and spec.max is not None
                assert bounded or spec.unbounded, f"{endpoint.api_mode}.{spec.name}"


def test_video_probe_sets_its_size_and_frames(tmp_path: Path) -> None:
    video = (
        VALID.replace("images-generations", "videos-sync")
        .replace("task: t2i", "task: t2v")
        .replace(
            "      - {name: size, type: size",
            "      - {name: num_frames, type: int, min: 1, max: 9, source: official}\n"
            "      - {name: size, type: size",
        )
        .replace(
            "output: {kind: image, size_field: size}",
            "output: {kind: video, size_field: size, frames_field: num_frames}",
        )
    )
    with pytest.raises(SpecError, match="the probe sets 'num_frames'"):
        load_contract(_write(tmp_path, video))
