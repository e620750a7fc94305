"""A gate's outcome held to what its servers' logs say they resolved (``domain.log_proof``).

The servers are the target the gate ran against (its captured log) and every server the gate
launched itself (perf's fresh launches, the start-up gate's, the offload sweep's points, a launch
expected to be refused): :class:`LaunchWatch` wraps the launch callbacks the engine hands a
check and keeps each launch's log. A launch is held to a proof only where its recipe declares
the row's value for that axis, or nothing for it: a reference recipe that realizes another
value (perf-ab's other arm) is another row's server, not this one's.
"""

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from omniqual.checks.base import CheckOutcome, LaunchAttempt, PointLaunch, TargetInfo
from omniqual.deploy.server_log import log_head
from omniqual.domain.log_proof import LogProof
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.recipe import LaunchRecipe

NO_LOG = "not checked: no server log"


@dataclass(slots=True)
class LaunchWatch:
    """The logs of the servers a gate launches, as it launches them."""

    launched: list[tuple[LaunchRecipe, Path]] = field(default_factory=list)

    def points(
        self, serve: Callable[[LaunchRecipe], AbstractAsyncContextManager[PointLaunch]] | None
    ) -> Callable[[LaunchRecipe], AbstractAsyncContextManager[PointLaunch]] | None:
        if serve is None:
            return None

        @asynccontextmanager
        async def watched(given: LaunchRecipe) -> AsyncIterator[PointLaunch]:
            async with serve(given) as point:
                self._keep(given, point.startup.log_path)
                yield point

        return watched

    def attempts(
        self, attempt: Callable[[LaunchRecipe], Awaitable[LaunchAttempt]] | None
    ) -> Callable[[LaunchRecipe], Awaitable[LaunchAttempt]] | None:
        if attempt is None:
            return None

        async def watched(given: LaunchRecipe) -> LaunchAttempt:
            tried = await attempt(given)
            self._keep(given, tried.startup.log_path)
            return tried

        return watched

    def _keep(self, recipe: LaunchRecipe, log_path: Path | None) -> None:
        if log_path is not None:
            self.launched.append((recipe, log_path))


def held_to_the_logs(
    outcome: CheckOutcome, proofs: tuple[LogProof, ...], target: TargetInfo, watch: LaunchWatch
) -> tuple[CheckOutcome, dict[str, object]]:
    """The outcome held to the logs, and what each log showed (recorded with every result).

    A pass on a server whose log resolved another value for one of the row's axes than the row
    declares is no evidence for the row: ``invalid``, saying so. A failure stays a failure (the
    row's own recipe launched that server) with the mismatch among its reasons; an undecided
    verdict is left as it is."""
    if not proofs:
        return outcome, {}
    shown: dict[str, object] = {}
    wrong: list[str] = []
    for proof in proofs:
        logs = [(target.label or "target", target.log_path)] if target.log_path else []
        logs += [(recipe.id, path) for recipe, path in watch.launched
                 if recipe.row.get(proof.axis) in (None, proof.declared)]  # fmt: skip
        resolved: dict[str, object] = {}
        for label, path in logs:
            text = log_head(path)
            if text is None:
                resolved[label] = "not checked: the log could not be read"
                continue
            reading = proof.judge(text)
            resolved[label] = dict(reading.seen) or "not shown in the server's log"
            reason = reading.reason()
            if reason is not None:
                wrong.append(f"{reason} (server {label})")
        shown[proof.axis] = {"declared": proof.declared, "served_as": list(proof.accepted),
                             "resolved": resolved or NO_LOG}  # fmt: skip
    if not wrong:
        return outcome, {"served_as": shown}
    if outcome.outcome is GateOutcome.FAILED:
        # The row's own recipe launched that server: its failure stands, the fallback beside it.
        return replace(outcome, reasons=(*outcome.reasons, *wrong)), {"served_as": shown}
    if outcome.outcome is not GateOutcome.PASSED:
        return outcome, {"served_as": shown}
    reasons = (*wrong, "the check itself said passed", *outcome.reasons)
    return replace(outcome, outcome=GateOutcome.INVALID, reasons=reasons), {"served_as": shown}
