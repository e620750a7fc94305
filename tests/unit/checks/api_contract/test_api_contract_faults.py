"""The api_contract gate against the fake server: PASS on the clean fake, FAIL on each fault it
targets with a reason that names the fault (field, endpoint, expected vs observed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_gate
from served_fake import ServedFake, ServedScript

from omniqual.domain.outcomes import GateOutcome
from tests.fakes import FakeConfig, FakeOmni


def _reasons(run: object) -> str:
    return "\n".join(run.outcome.reasons)  # type: ignore[attr-defined]


def test_clean_fake_passes_with_declared_deviation_and_evidence(
    fake_config: FakeConfig, temp_dir: Path, storage_dir: Path
) -> None:
    # The async job's stored file must be watched (G0-30): the fake stores it as a server does.
    fake = ServedFake(fake_config, ServedScript(storage_dir=storage_dir))
    run = run_gate(fake, temp_dirs=[str(temp_dir)], storage_dirs=[str(storage_dir)])
    assert run.outcome.outcome is GateOutcome.PASSED, _reasons(run)
    cases = {c.id: c for c in run.outcome.cases}
    assert len(cases) > 60
    # The declared 422-for-missing-image deviation is recorded as a deviation, never a pass.
    missing = cases["images-edits/image/missing-input"]
    assert missing.deviation and missing.outcome is GateOutcome.FAILED
    assert missing.observed_status == "422" and missing.expected_status == "400"
    assert "declared deviation" in _reasons(run)
    assert cases["images-generations/size/max"].outcome is GateOutcome.PASSED
    assert cases["side-effects/async-jobs"].outcome is GateOutcome.PASSED
    assert cases["side-effects/temp-files"].outcome is GateOutcome.PASSED
    assert cases["parity/videos-async~videos-sync"].outcome is GateOutcome.PASSED
    assert cases["images-generations/n/max"].outcome is GateOutcome.PASSED
    assert cases["audio-generate/audio_length/below-min"].observed_status == "400"
    # Evidence: cases JSONL, raw-response summary without bodies, the contract itself.
    roles = {a.role for a in run.outcome.artifacts}
    assert roles == {"cases", "raw-responses", "contract"}
    lines = run.sink.stored["cases"].decode().splitlines()
    assert len(lines) == len(run.outcome.cases)
    raw = json.loads(run.sink.stored["raw-responses"])
    assert raw and set(raw[0]) == {
        "case",
        "method",
        "path",
        "status",
        "content_type",
        "size",
        "elapsed_s",
    }
    assert b"a red cube" not in run.sink.stored["cases"]
    assert b'b64_json":"' not in run.sink.stored["raw-responses"]
    assert run.progress and run.progress[-1][1] == pytest.approx(1.0)


def test_accepts_out_of_range_fails_naming_field_and_value(fake_config: FakeConfig) -> None:
    fake_config.faults.accepts_out_of_range = True
    # Images only: the fake itself divides by an accepted fps=0 on the video routes.
    run = run_gate(FakeOmni(fake_config), api_modes=["images-generations"])
    assert run.outcome.outcome is GateOutcome.FAILED
    text = _reasons(run)
    assert "images-generations/num_inference_steps/above-max" in text
    assert "accepted-but-invalid: invalid value num_inference_steps=201 answered HTTP 200" in text
    assert "contract says 400" in text


def test_error_without_envelope_fails(fake_config: FakeConfig) -> None:
    fake_config.faults.error_without_envelope = True
    run = run_gate(FakeOmni(fake_config))
    assert run.outcome.outcome is GateOutcome.FAILED
    assert "error_without_envelope" in _reasons(run)
    assert "images-generations/n/below-min" in _reasons(run)


@pytest.mark.parametrize("status", [400, 200])
def test_payload_limit_status_fails(fake_config: FakeConfig, status: int) -> None:
    fake_config.faults.payload_limit_status = status  # type: ignore[assignment]
    run = run_gate(FakeOmni(fake_config), api_modes=["images-edits"])
    assert run.outcome.outcome is GateOutcome.FAILED
    text = _reasons(run)
    assert "images-edits/image/oversize" in text
    if status == 400:
        assert "payload over the cap: expected HTTP 413, observed HTTP 400" in text
    else:
        assert "accepted-but-invalid: payload over the cap" in text and "HTTP 200" in text


def test_payload_400_is_a_deviation_when_declared(fake_config: FakeConfig, tmp_path: Path) -> None:
    source = (Path(__file__).parent / "contracts" / "fake-omni.yaml").read_text()
    declared = source + (
        '  - release: "0.30.*"\n    cases: ["*/oversize"]\n    observed_status: 400\n'
        "    reason: 0.30 answers 400 for payload limits\n"
    )
    (tmp_path / "fake-omni.yaml").write_text(declared)
    fake_config.faults.payload_limit_status = 400
    run = run_gate(
        FakeOmni(fake_config),
        contracts_dir=tmp_path,
        api_modes=["images-edits"],
        temp_dirs=[str(fake_config.temp_dir)],
    )
    assert run.outcome.outcome is GateOutcome.PASSED, _reasons(run)
    oversize = next(c for c in run.outcome.cases if c.id == "images-edits/image/oversize")
    assert oversize.deviation and oversize.outcome is not GateOutcome.PASSED
    # Another release does not inherit the deviation.
    other = run_gate(
        FakeOmni(fake_config), contracts_dir=tmp_path, api_modes=["images-edits"], release="0.31.0"
    )
    assert other.outcome.outcome is GateOutcome.FAILED


def test_creates_job_for_invalid_async_fails(fake_config: FakeConfig) -> None:
    fake_config.faults.creates_job_for_invalid_async = True
    run = run_gate(FakeOmni(fake_config), api_modes=["videos-async"])
    assert run.outcome.outcome is GateOutcome.FAILED
    text = _reasons(run)
    assert "creates_job_for_invalid_async" in text and "GET /v1/videos gained job" in text


def test_leaves_temp_file_fails(fake_config: FakeConfig, temp_dir: Path) -> None:
    fake_config.faults.leaves_temp_file = True
    run = run_gate(
        FakeOmni(fake_config), api_modes=["images-generations"], temp_dirs=[str(temp_dir)]
    )
    assert run.outcome.outcome is GateOutcome.FAILED
    assert "leaves_temp_file" in _reasons(run) and str(temp_dir) in _reasons(run)


def test_temp_check_without_dirs_is_recorded_and_invalid(fake_config: FakeConfig) -> None:
    run = run_gate(FakeOmni(fake_config), api_modes=["images-generations"])
    temp = next(c for c in run.outcome.cases if c.id == "side-effects/temp-files")
    assert temp.outcome is GateOutcome.SKIPPED and "no temp dir to watch" in temp.note
    assert run.outcome.outcome is GateOutcome.INVALID
    assert "side-effects/temp-files not checked" in _reasons(run)


def test_unreadable_temp_dir_is_not_counted_as_empty(
    fake_config: FakeConfig, tmp_path: Path
) -> None:
    missing = tmp_path / "gone"
    run = run_gate(
        FakeOmni(fake_config), api_modes=["images-generations"], temp_dirs=[str(missing)]
    )
    assert run.outcome.outcome is GateOutcome.INVALID
    assert "temp dir(s) unreadable" in _reasons(run) and str(missing) in _reasons(run)


def test_unhealthy_after_rejection_fails(fake_config: FakeConfig) -> None:
    fake_config.faults.unhealthy_after_rejection = True
    run = run_gate(FakeOmni(fake_config), api_modes=["audio-generate"])
    assert run.outcome.outcome is GateOutcome.FAILED
    assert "unhealthy_after_rejection: GET /health answered 503" in _reasons(run)


def test_sync_async_bytes_differ_fails_naming_both_paths(fake_config: FakeConfig) -> None:
    fake_config.faults.sync_async_bytes_differ = True
    run = run_gate(FakeOmni(fake_config), api_modes=["videos-async"])
    assert run.outcome.outcome is GateOutcome.FAILED
    text = _reasons(run)
    assert "sync_async_bytes_differ" in text and "/v1/videos vs /v1/videos/sync" in text


def test_parity_can_be_switched_off(fake_config: FakeConfig, storage_dir: Path) -> None:
    fake_config.faults.sync_async_bytes_differ = True
    run = run_gate(
        ServedFake(fake_config, ServedScript(storage_dir=storage_dir)),
        api_modes=["videos-async"],
        parity=False,
        temp_dirs=[str(fake_config.temp_dir)],
        storage_dirs=[str(storage_dir)],
    )
    assert run.outcome.outcome is GateOutcome.PASSED, _reasons(run)


def test_row_selects_endpoint_and_missing_contract_skips(fake_config: FakeConfig) -> None:
    run = run_gate(FakeOmni(fake_config), row={"model": "fake-omni", "api_mode": "audio-generate"})
    assert {c.endpoint for c in run.outcome.cases} <= {"audio-generate", "-"}
    missing = run_gate(FakeOmni(fake_config), row={"model": "no-such-model"})
    assert missing.outcome.outcome is GateOutcome.SKIPPED
    assert "no contract for model 'no-such-model'" in missing.outcome.reasons[0]
