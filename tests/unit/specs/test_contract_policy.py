"""The Gate 0 rules a contract file is held to at load time (``omniqual.specs.contract_policy``):
each one fails a contract that breaks it, at the line of the field, and passes one that keeps it."""

from __future__ import annotations

from pathlib import Path

import pytest

from omniqual.specs.contracts import load_contract
from omniqual.specs.source import SpecError

PINNED = """\
schema_version: 1
model: m
official: diffusers==0.40.0 StableDiffusion3Pipeline
checkpoint: org/model@0123456789abcdef0123456789abcdef01234567
target_release: "0.30.0"
endpoints:
  - api_mode: images-edits
    task: i2i
    probe: {prompt: p}
    fields:
      - {name: prompt, type: str, required: true}
    inputs:
      - {field: image, min_count: 1, max_count: 1, probe_count: 1}
    output: {kind: image}
"""


def _load(tmp_path: Path, text: str) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(text)
    load_contract(path)


def _error(tmp_path: Path, text: str) -> str:
    with pytest.raises(SpecError) as raised:
        _load(tmp_path, text)
    return str(raised.value)


def test_a_pinned_contract_loads(tmp_path: Path) -> None:
    _load(tmp_path, PINNED)


@pytest.mark.parametrize(
    "official",
    ["diffusers StableDiffusion3Pipeline", "diffusers>=0.40 X", "diffusers@main X", "latest"],
)
def test_an_official_implementation_without_an_exact_pin_is_refused(
    tmp_path: Path, official: str
) -> None:
    text = PINNED.replace("diffusers==0.40.0 StableDiffusion3Pipeline", official)
    message = _error(tmp_path, text)
    assert f"{tmp_path / 'm.yaml'}:3: official:" in message
    assert "exact version" in message


def test_an_official_commit_is_a_pin(tmp_path: Path) -> None:
    commit = "github.com/huggingface/diffusers@" + "a" * 40 + " X"
    _load(tmp_path, PINNED.replace("diffusers==0.40.0 StableDiffusion3Pipeline", commit))


@pytest.mark.parametrize("checkpoint", ["org/model", "org/model@main", "org/model@abc123"])
def test_a_checkpoint_without_a_commit_revision_is_refused(
    tmp_path: Path, checkpoint: str
) -> None:
    text = PINNED.replace("org/model@0123456789abcdef0123456789abcdef01234567", checkpoint)
    message = _error(tmp_path, text)
    assert ":4: checkpoint:" in message and "40-hex" in message


def test_a_bundled_checkpoint_names_this_model(tmp_path: Path) -> None:
    bundled = PINNED.replace(
        "org/model@0123456789abcdef0123456789abcdef01234567", "omniqual bundled m (builders/m.py)"
    )
    _load(tmp_path, bundled)
    other = bundled.replace("omniqual bundled m ", "omniqual bundled other ")
    assert ":4: checkpoint:" in _error(tmp_path, other)


@pytest.mark.parametrize("release", ["'0.30'", "'0.30.*'", "latest", "main"])
def test_a_target_release_that_is_no_exact_version_is_refused(
    tmp_path: Path, release: str
) -> None:
    message = _error(tmp_path, PINNED.replace('"0.30.0"', release))
    assert ":5: target_release:" in message and "exact" in message


def test_several_uploads_need_an_aggregate_cap(tmp_path: Path) -> None:
    several = PINNED.replace("max_count: 1, probe_count: 1}", "max_count: 3, probe_count: 1}")
    message = _error(tmp_path, several)
    assert ":13: endpoints.0.inputs.0.max_total_bytes:" in message
    assert "aggregate byte cap" in message
    capped = several.replace(
        "probe_count: 1}", "probe_count: 1, max_bytes: 1000, max_total_bytes: 2000}"
    )
    _load(tmp_path, capped)


AUDIO_ON_CHAT = PINNED.replace("api_mode: images-edits", "api_mode: chat-completions").replace(
    "output: {kind: image}", "output: {kind: audio}"
)


def test_audio_is_served_on_the_audio_generate_endpoint(tmp_path: Path) -> None:
    message = _error(tmp_path, AUDIO_ON_CHAT)
    assert ":7: endpoints.0.api_mode:" in message and "/v1/audio/generate" in message


def test_an_upload_on_a_json_only_endpoint_is_refused(tmp_path: Path) -> None:
    json_only = PINNED.replace("api_mode: images-edits", "api_mode: images-generations")
    message = _error(tmp_path, json_only)
    assert ":13: endpoints.0.inputs.0.max_count:" in message and "multipart" in message
    # The chat API carries its images as data URLs inside its messages: that is its own form.
    _load(tmp_path, PINNED.replace("api_mode: images-edits", "api_mode: chat-completions"))
