"""Check kinds for engine tests: no HTTP, a scripted verdict, one artifact."""

import asyncio
from typing import ClassVar, Literal

from omniqual.checks.base import CheckContext, CheckOutcome, CheckParams
from omniqual.domain.outcomes import GateOutcome

CALLS: list[tuple[str, str]] = []
"""(gate id, row) of every run, for assertions."""
TARGET_PIDS: list[int | None] = []
"""The server pid each run was given (None when the harness knows no process)."""
TARGET_AGENTS: list[str | None] = []
"""The agent URL each run was given (None: no agent reads the server's process tree)."""


class ScriptedParams(CheckParams):
    outcome: Literal["passed", "failed", "invalid", "raise"] = "passed"
    reason: str = ""
    hang: bool = False
    """Report progress, then wait until cancelled (a workload that never fits a budget)."""
    effective_tuple: bool = False
    """Report a tuple among the effective settings (as a careless check would)."""
    raise_timeout: bool = False
    """Let a TimeoutError of its own escape (a client deadline it did not catch)."""


class ScriptedCheck:
    kind: ClassVar[str] = "scripted"
    params_model: ClassVar[type[CheckParams]] = ScriptedParams
    needs: ClassVar[Literal["server", "checkpoint", "launches"]] = "server"

    async def run(self, ctx: CheckContext, params: CheckParams) -> CheckOutcome:
        assert isinstance(params, ScriptedParams)
        CALLS.append((ctx.gate.id, str(ctx.row)))
        TARGET_PIDS.append(ctx.target.pid)
        TARGET_AGENTS.append(ctx.target.agent.url if ctx.target.agent is not None else None)
        if params.outcome == "raise":
            raise RuntimeError("scripted harness fault")
        if params.raise_timeout:
            raise TimeoutError("the check's own deadline")
        if params.hang:
            ctx.progress("case 3 of 8", 0.375)
            await asyncio.Event().wait()
        artifact = ctx.artifacts.put_artifact(
            f"{ctx.gate.id} on {ctx.row}".encode(), media_type="text/plain", role="log",
            name=f"{ctx.gate.id} log",
        )  # fmt: skip
        reasons = (params.reason,) if params.reason else ()
        effective = {"command": ("python", "-m", "x")} if params.effective_tuple else {}
        return CheckOutcome(GateOutcome(params.outcome), reasons, artifacts=(artifact,),
                            effective=effective)  # type: ignore[arg-type]
