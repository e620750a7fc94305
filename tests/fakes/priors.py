"""The priors the progress tests compute their expected figures with: fixed here, so a test of
the arithmetic or of a line's format never changes when the shipped priors are re-measured."""

from types import MappingProxyType

import pytest

from omniqual.engine.run import eta

WORKED_PRIORS_S = MappingProxyType({
    "api_contract": 240.0, "strict_load": 90.0, "fails_fast": 120.0, "fails_fast_request": 60.0,
    "soak": 600.0, "abort": 180.0, "candidate_parity": 300.0, "reference_parity": 600.0,
    "offload_sweep": 900.0,
})  # fmt: skip
WORKED_STARTUP_S = 120.0


@pytest.fixture
def worked_priors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(eta, "GATE_PRIORS_S", WORKED_PRIORS_S)
    monkeypatch.setattr(eta, "STARTUP_PRIOR_S", WORKED_STARTUP_S)
