"""G0-21: every model path the server's /openapi.json lists is in the contract or declared out of
scope by it; a served path in neither fails naming it, and a server without /openapi.json leaves
the check undone (invalid), never passed."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CONTRACTS, run_gate
from served_fake import ServedFake, ServedScript

from omniqual.domain.outcomes import GateOutcome
from omniqual.specs.contracts import load_contract
from omniqual.specs.source import SpecError
from tests.fakes import FakeConfig

CASE = "contract/endpoint-coverage"


def _case(run: object) -> object:
    cases = {c.id: c for c in run.outcome.cases}  # type: ignore[attr-defined]
    return cases[CASE]


def _reasons(run: object) -> str:
    return "\n".join(run.outcome.reasons)  # type: ignore[attr-defined]


def test_served_path_outside_the_contract_fails_naming_it(fake_config: FakeConfig) -> None:
    fake = ServedFake(fake_config, ServedScript(extra_paths=("/v1/audio/speech",)))
    run = run_gate(fake, api_modes=["images-generations"], temp_dirs=[str(fake_config.temp_dir)])
    assert run.outcome.outcome is GateOutcome.FAILED
    assert "/v1/audio/speech" in _reasons(run) and "out_of_scope_endpoints" in _reasons(run)
    case = _case(run)
    assert case.outcome is GateOutcome.FAILED  # type: ignore[attr-defined]
    assert "/v1/audio/speech" in case.note  # type: ignore[attr-defined]


def test_served_path_declared_out_of_scope_passes(fake_config: FakeConfig, tmp_path: Path) -> None:
    source = (CONTRACTS / "fake-omni.yaml").read_text()
    declared = source.replace(
        "parity:\n",
        "out_of_scope_endpoints:\n  - {path: /v1/audio/speech, why: the fake model speaks no "
        "text}\n  - {path: '/v1/realtime/sessions/{session_id}/step', why: no realtime sessions}"
        "\nparity:\n",
    )
    (tmp_path / "fake-omni.yaml").write_text(declared)
    script = ServedScript(extra_paths=("/v1/audio/speech", "/v1/realtime/sessions/{sid}/step"))
    run = run_gate(
        ServedFake(fake_config, script),
        contracts_dir=tmp_path,
        api_modes=["images-generations"],
        temp_dirs=[str(fake_config.temp_dir)],
    )
    assert run.outcome.outcome is GateOutcome.PASSED, _reasons(run)
    assert _case(run).outcome is GateOutcome.PASSED  # type: ignore[attr-defined]


def test_video_job_routes_are_covered_by_the_async_endpoint(fake_config: FakeConfig) -> None:
    paths = (
        "/v1/videos",
        "/v1/videos/{video_id}",
        "/v1/videos/{video_id}/content",
        "/v1/videos/sync",
        "/v1/images/edits",
        "/v1/chat/completions",
        "/v1/audio/generate",
    )
    run = run_gate(
        ServedFake(fake_config, ServedScript(extra_paths=paths)),
        api_modes=["images-generations"],
        temp_dirs=[str(fake_config.temp_dir)],
    )
    assert _case(run).outcome is GateOutcome.PASSED, _reasons(run)  # type: ignore[attr-defined]
    assert run.outcome.outcome is GateOutcome.PASSED, _reasons(run)


def test_no_openapi_document_is_invalid_and_says_so(fake_config: FakeConfig) -> None:
    run = run_gate(
        ServedFake(fake_config, ServedScript(no_openapi=True)),
        api_modes=["images-generations"],
        temp_dirs=[str(fake_config.temp_dir)],
    )
    assert run.outcome.outcome is GateOutcome.INVALID
    assert f"{CASE} not checked" in _reasons(run) and "/openapi.json" in _reasons(run)
    assert _case(run).outcome is GateOutcome.SKIPPED  # type: ignore[attr-defined]


def test_out_of_scope_path_the_contract_serves_is_a_spec_error(tmp_path: Path) -> None:
    source = (CONTRACTS / "fake-omni.yaml").read_text()
    declared = source.replace(
        "parity:\n",
        "out_of_scope_endpoints:\n  - {path: '/v1/videos/{id}/content', why: not ours}\n"
        "  - {path: /v1/audio/speech, why: no speech}\n  - {path: /v1/audio/speech/, why: twice}"
        "\nparity:\n",
    )
    path = tmp_path / "fake-omni.yaml"
    path.write_text(declared)
    with pytest.raises(SpecError) as raised:
        load_contract(path)
    text = str(raised.value)
    assert "/v1/videos/{id}/content is an endpoint of this contract" in text
    assert "/v1/audio/speech/ declared out of scope twice" in text
    assert f"{path}:" in text


def test_a_budget_verdict_is_judged_on_the_probe_before_any_other_served_request(
    fake_config: FakeConfig,
) -> None:
    """The probe is timed after the negative cases (G0-33) and before every other served request:
    a host too slow for the workload is told so by it, beside what was found before it."""
    fake_config.image_work_s = 0.2
    script = ServedScript(extra_paths=("/v1/audio/speech",))
    slow = run_gate(ServedFake(fake_config, script), api_modes=["images-generations"],
                    temp_dirs=[str(fake_config.temp_dir)], budget_s=1.0)  # fmt: skip
    ids = [c.id for c in slow.outcome.cases]
    assert ids[0] == CASE and ids[-1] == "images-generations/probe"
    assert any("too slow" in reason for reason in slow.outcome.reasons)
    assert slow.outcome.outcome is GateOutcome.FAILED  # the undeclared speech path, found first
    fits = run_gate(ServedFake(fake_config, script), api_modes=["images-generations"],
                    temp_dirs=[str(fake_config.temp_dir)], budget_s=600.0)  # fmt: skip
    ids = [c.id for c in fits.outcome.cases]
    assert ids[0] == CASE and "images-generations/probe" in ids
    assert fits.outcome.outcome is GateOutcome.FAILED  # the undeclared speech path
