"""G0-01 at the deployment: the server the gate runs against is the vLLM-Omni release (or commit)
and the checkpoint its contract is frozen against; a mismatch fails naming both, and what cannot
be read is recorded as not checked, never passed."""

from __future__ import annotations

from pathlib import Path

from conftest import CONTRACTS, run_gate
from served_fake import ServedFake

from omniqual.checks.api_contract.pins import PINS_CASE, check_pins
from omniqual.domain.contract import ModelContract
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.provenance import Provenance
from omniqual.domain.recipe import LaunchRecipe
from omniqual.specs.contracts import load_contract
from tests.fakes import FakeConfig

COMMIT = "0123456789abcdef0123456789abcdef01234567"
EMBEDDED = LaunchRecipe.model_validate(
    {"id": "r", "description": "d", "kind": "embedded", "pipeline": "fake-omni"}
)


def _contract(**changes: str) -> ModelContract:
    return load_contract(CONTRACTS / "fake-omni.yaml").model_copy(update=changes)


def test_a_server_of_another_release_fails_naming_both() -> None:
    checked = check_pins(_contract(), "0.31.0", None, None)
    assert checked.result.outcome is GateOutcome.FAILED
    assert any("0.30.0" in f and "0.31.0" in f for f in checked.failures), checked.failures


def test_the_pinned_release_passes() -> None:
    checked = check_pins(_contract(), "0.30.0", None, EMBEDDED)
    assert checked.result.outcome is GateOutcome.PASSED, checked.failures
    assert not checked.failures


def test_a_commit_pin_is_held_against_the_served_commit() -> None:
    contract = _contract(target_release=COMMIT)
    other = Provenance(vllm_omni_commit="f" * 40)
    assert check_pins(contract, "0.30.0", other, None).result.outcome is GateOutcome.FAILED
    same = Provenance(vllm_omni_commit=COMMIT)
    assert check_pins(contract, "0.30.0", same, EMBEDDED).result.outcome is GateOutcome.PASSED


def test_a_checkpoint_revision_is_held_against_the_served_one() -> None:
    contract = _contract(checkpoint=f"org/model@{COMMIT}")
    moved = Provenance(model_revision="e" * 40)
    checked = check_pins(contract, "0.30.0", moved, None)
    assert checked.result.outcome is GateOutcome.FAILED
    assert any(COMMIT in f and "e" * 40 in f for f in checked.failures)
    same = Provenance(model_revision=COMMIT)
    assert check_pins(contract, "0.30.0", same, None).result.outcome is GateOutcome.PASSED


def test_a_bundled_checkpoint_is_held_against_the_embedded_pipeline() -> None:
    other = EMBEDDED.model_copy(update={"pipeline": "sd3-tiny"})
    checked = check_pins(_contract(), "0.30.0", None, other)
    assert checked.result.outcome is GateOutcome.FAILED
    assert any("sd3-tiny" in f for f in checked.failures)
    assert check_pins(_contract(), "0.30.0", None, EMBEDDED).result.outcome is GateOutcome.PASSED


def test_what_cannot_be_read_is_not_checked_never_passed() -> None:
    contract = _contract(checkpoint=f"org/model@{COMMIT}")
    checked = check_pins(contract, None, None, None)
    assert checked.result.outcome is GateOutcome.SKIPPED
    assert not checked.failures
    assert "not checked" in checked.result.note


def test_the_gate_fails_on_a_server_of_another_release(
    fake_config: FakeConfig, tmp_path: Path
) -> None:
    run = run_gate(ServedFake(fake_config), api_modes=["images-generations"], release="0.31.0",
                   temp_dirs=[str(fake_config.temp_dir)])  # fmt: skip
    assert run.outcome.outcome is GateOutcome.FAILED
    cases = {c.id: c for c in run.outcome.cases}
    assert cases[PINS_CASE].outcome is GateOutcome.FAILED
    assert any("0.31.0" in reason for reason in run.outcome.reasons)


def test_a_release_the_target_does_not_report_is_unread_not_a_mismatch() -> None:
    contract = load_contract(CONTRACTS / "fake-omni.yaml")
    found = check_pins(contract, None, Provenance(vllm_omni_version="unknown"), None)
    assert not found.failures
