"""G0-13 and G0-14 as contract cases: where an input declares an aggregate byte cap, several
uploads each under it whose sum passes it are refused with 413; where it declares a decoded
pixel cap, a valid-header PNG declaring more pixels than the cap, with a tiny body, is refused
(400 or 413) before any side effect."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from conftest import CONTRACTS, GateRun, run_gate
from PIL import Image
from served_fake import ServedFake, ServedScript

from omniqual.checks.api_contract.cases import generate_cases
from omniqual.checks.api_contract.wire import build_request, file_bytes
from omniqual.domain.outcomes import GateOutcome
from omniqual.specs.contracts import load_contract
from omniqual.specs.source import SpecError
from tests.fakes import FakeConfig

_EDIT_INPUT = (
    "      - {field: image, min_count: 1, max_count: 1, probe_count: 1, "
    "media_types: [image/png],\n         max_bytes: 65536}"
)
_CAPPED_INPUT = (
    "      - {field: image, min_count: 1, max_count: 2, probe_count: 1, "
    "media_types: [image/png],\n         max_total_bytes: 65536, max_pixels: 33177600}"
)


def _contract(tmp_path: Path, edit_input: str = _CAPPED_INPUT) -> Path:
    source = (CONTRACTS / "fake-omni.yaml").read_text()
    assert _EDIT_INPUT in source
    (tmp_path / "fake-omni.yaml").write_text(source.replace(_EDIT_INPUT, edit_input))
    return tmp_path


def _run(config: FakeConfig, contracts: Path, script: ServedScript | None = None) -> GateRun:
    config.max_edit_images = 2
    return run_gate(ServedFake(config, script), contracts_dir=contracts,
                    api_modes=["images-edits"], temp_dirs=[str(config.temp_dir)])  # fmt: skip


def test_cap_cases_are_generated_each_file_under_the_cap(tmp_path: Path) -> None:
    endpoint = load_contract(_contract(tmp_path) / "fake-omni.yaml").endpoint("images-edits")
    assert endpoint is not None
    cases = {c.kind: c for c in generate_cases(endpoint)}
    aggregate = cases["aggregate-oversize"]
    sizes = [len(file_bytes(f)) for f in aggregate.files]
    assert len(sizes) == 2 and sum(sizes) > 65536 and max(sizes) < 65536
    assert aggregate.expected_status == "413"
    bomb = cases["pixel-bomb"]
    data = file_bytes(bomb.files[0])
    with Image.open(io.BytesIO(data)) as image:  # the header is valid: it opens
        width, height = image.size
    assert width * height > 33177600 and len(data) < 1024
    assert bomb.expected_status == "400/413"
    assert len(build_request(bomb).files) == 1


def test_caps_enforced_pass(fake_config: FakeConfig, tmp_path: Path) -> None:
    run = _run(fake_config, _contract(tmp_path))
    assert run.outcome.outcome is GateOutcome.PASSED, run.outcome.reasons
    cases = {c.id: c for c in run.outcome.cases}
    assert cases["images-edits/image/aggregate-oversize"].observed_status == "413"
    assert cases["images-edits/image/pixel-bomb"].outcome is GateOutcome.PASSED


def test_unenforced_aggregate_cap_fails(fake_config: FakeConfig, tmp_path: Path) -> None:
    fake_config.faults.payload_limit_status = 200
    run = _run(fake_config, _contract(tmp_path))
    assert run.outcome.outcome is GateOutcome.FAILED
    text = "\n".join(run.outcome.reasons)
    assert "images-edits/image/aggregate-oversize" in text and "accepted-but-invalid" in text


def test_pixels_passed_to_the_engine_fail(fake_config: FakeConfig, tmp_path: Path) -> None:
    run = _run(fake_config, _contract(tmp_path), ServedScript(decodes_headers_only=True))
    assert run.outcome.outcome is GateOutcome.FAILED
    text = "\n".join(run.outcome.reasons)
    assert "images-edits/image/pixel-bomb" in text and "accepted-but-invalid" in text


@pytest.mark.parametrize(("edit_input", "message"), [
    (_CAPPED_INPUT.replace("max_count: 2", "max_count: 1"), "several files"),
    (_CAPPED_INPUT.replace("max_total_bytes: 65536", "max_total_bytes: 65536, max_bytes: 1000"),
     "no 2 files under max_bytes"),
])  # fmt: skip
def test_an_aggregate_cap_no_upload_can_pass_is_a_spec_error(
    tmp_path: Path, edit_input: str, message: str
) -> None:
    with pytest.raises(SpecError, match=message):
        load_contract(_contract(tmp_path, edit_input) / "fake-omni.yaml")
