"""The ``lora`` gate's case names that a contract's deviations may declare (imports nothing, so
the API contract gate can hold a declaration to them without loading this gate)."""

REFUSALS = ("missing-path", "no-name", "no-layer", "malformed", "bad-scale", "bad-int-id")
"""Bad adapters the gate sends, each expected to be refused with a 4xx."""
BROKEN = ("no-layer", "malformed")
"""The refusals that need an adapter directory on the server's host (bundled, or given)."""


def lora_case_id(api_mode: str, name: str) -> str:
    return f"{api_mode}/lora/{name}"
