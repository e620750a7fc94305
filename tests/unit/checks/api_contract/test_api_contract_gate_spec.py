"""gates/api-contract.yaml is a valid gate of the registered api_contract kind."""

from __future__ import annotations

from pathlib import Path

from omniqual.checks.api_contract import ApiContractCheck, ApiContractParams
from omniqual.checks.registry import resolve
from omniqual.domain.gate import GateSpec
from omniqual.specs.source import load_spec

ROOT = Path(__file__).resolve().parents[4]


def test_gate_spec_validates_and_kind_resolves() -> None:
    spec, _ = load_spec(ROOT / "gates" / "api-contract.yaml", GateSpec)
    assert spec.kind == "api_contract" and spec.version == 3
    params = ApiContractParams.model_validate(spec.params)
    assert params.contracts_dir == "gates/contracts" and params.parity is True
    assert (ROOT / params.contracts_dir).is_dir()
    assert resolve("api_contract") is ApiContractCheck
    assert ApiContractCheck.needs == "server"
