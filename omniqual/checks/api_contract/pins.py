"""SKILL G0-01 at the deployment: the server the gate runs against is the one its contract is
frozen against. The contract pins a vLLM-Omni release (or commit) and a checkpoint (a 40-hex
revision, or a checkpoint omniqual bundles); the served release is the launch environment's
vLLM-Omni version where known, else the release the gate reads (``GET /version``), the served
commit and checkpoint revision what the target's provenance records, a bundled checkpoint the
embedded recipe's pipeline. A mismatch fails naming both; a pin nothing served can be held
against is recorded as not checked, never passed."""

from dataclasses import dataclass

from omniqual.domain.contract import ModelContract
from omniqual.domain.evidence import CaseResult
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.provenance import NOT_VISIBLE, Provenance
from omniqual.domain.recipe import LaunchRecipe, RecipeKind
from omniqual.domain.rule_inputs import UNKNOWN_VALUES
from omniqual.specs.contract_policy import BUNDLED, COMMIT

PINS_CASE = "contract/pins"


@dataclass(frozen=True, slots=True)
class PinsCheck:
    result: CaseResult
    failures: tuple[str, ...] = ()


def check_pins(
    contract: ModelContract,
    release: str | None,
    provenance: Provenance | None,
    recipe: LaunchRecipe | None,
) -> PinsCheck:
    """The contract's release and checkpoint pins against what the target serves."""
    held: list[tuple[str, str, str | None]] = []  # (what, pinned, served)
    pinned_release = contract.target_release
    if COMMIT.fullmatch(pinned_release):
        held.append(("vLLM-Omni commit", pinned_release, _of(provenance, "vllm_omni_commit")))
    else:
        served = _of(provenance, "vllm_omni_version") or release
        held.append(("vLLM-Omni release", pinned_release, served))
    checkpoint = contract.checkpoint
    if checkpoint.startswith(BUNDLED):
        named = checkpoint[len(BUNDLED) :].split(" ", 1)[0]
        bundled = recipe is not None and recipe.kind is RecipeKind.EMBEDDED
        held.append(("bundled checkpoint", named, recipe.pipeline if bundled and recipe else None))
    elif (found := COMMIT.search(checkpoint)) is not None:
        held.append(("checkpoint revision", found.group(0), _of(provenance, "model_revision")))
    failures = tuple(
        f"contract_pin_mismatch: contract {contract.model} is frozen against {what} {pinned}, "
        f"but the target serves {served}: re-freeze the contract for it (SKILL G0-01)"
        for what, pinned, served in held
        if served is not None and served != pinned
    )
    unread = [what for what, _, served in held if served is None]
    if failures:
        outcome, observed = GateOutcome.FAILED, f"{len(failures)} mismatch(es)"
    elif unread:
        outcome, observed = GateOutcome.SKIPPED, "not checked"
    else:
        outcome, observed = GateOutcome.PASSED, "as pinned"
    shown = "; ".join(f"{what} {pinned} (served {served or 'unknown'})"
                      for what, pinned, served in held)  # fmt: skip
    note = shown + (f"; not checked: {', '.join(unread)} (not known of this target)"
                    if unread else "")  # fmt: skip
    result = CaseResult(id=PINS_CASE, endpoint="-", expected_status="the pinned release and "
                        "checkpoint", observed_status=observed, outcome=outcome,
                        note=note[:240])  # fmt: skip
    return PinsCheck(result, failures)


def _of(provenance: Provenance | None, name: str) -> str | None:
    """What the target's provenance says, or None where it says nothing (``unknown``, not
    visible): an unread pin is not a mismatch."""
    value = getattr(provenance, name, None) if provenance is not None else None
    known = isinstance(value, str) and value not in UNKNOWN_VALUES and value != NOT_VISIBLE
    return value if known else None
