"""A check kind for the pytest-plugin tests: asks the served fake for its models over a real
socket, then concludes what its params say (every outcome a gate can record)."""

from typing import ClassVar, Literal

from omniqual.checks.base import CheckContext, CheckOutcome, CheckParams
from omniqual.domain.outcomes import GateOutcome


class OutcomeParams(CheckParams):
    outcome: Literal["passed", "failed", "invalid", "skipped", "raise"] = "passed"
    reason: str = ""


class OutcomeCheck:
    kind: ClassVar[str] = "outcome"
    params_model: ClassVar[type[CheckParams]] = OutcomeParams
    needs: ClassVar[Literal["server", "checkpoint", "launches"]] = "server"

    async def run(self, ctx: CheckContext, params: CheckParams) -> CheckOutcome:
        assert isinstance(params, OutcomeParams)
        async with ctx.make_client() as client:
            models = await client.models()
        if params.outcome == "raise":
            raise RuntimeError(params.reason)
        served = ", ".join(card.id for card in models.data)
        artifact = ctx.artifacts.put_artifact(
            f"served: {served}".encode(), media_type="text/plain", role="log", name="models"
        )
        reasons = (params.reason,) if params.reason else ()
        return CheckOutcome(GateOutcome(params.outcome), reasons, artifacts=(artifact,))
