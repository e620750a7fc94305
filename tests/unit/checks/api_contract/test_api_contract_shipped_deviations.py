"""Every deviation the shipped contracts declare names a case some gate sends on that contract
(the API contract's own, field-effect's defaults and effects, lora's refusals): the live gate
would otherwise fail the row for a declaration that can never reproduce."""

from pathlib import Path

import pytest

from omniqual.checks.api_contract.check import unmatched_deviations
from omniqual.specs.contracts import load_contract

CONTRACTS = Path(__file__).resolve().parents[4] / "gates" / "contracts"


@pytest.mark.parametrize("path", sorted(CONTRACTS.glob("*.yaml")), ids=lambda p: p.stem)
def test_each_declared_case_pattern_names_a_case(path: Path) -> None:
    assert unmatched_deviations(load_contract(path)) == []
