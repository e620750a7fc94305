"""The ``api_contract`` check kind (SKILL Gate 0): the model's frozen API contract, its boundary
cases and their rejected neighbours, side-effect checks and sync/async parity."""

from omniqual.checks.api_contract.check import ApiContractCheck, ApiContractParams

__all__ = ["ApiContractCheck", "ApiContractParams"]
