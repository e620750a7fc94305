"""The ``startup`` check kind: a fresh launch of the row's recipe, judged from spawn to warm.

The gate owns its launch (``serve_point``, as perf does), so the server it judges has served
nothing yet. The launcher polls the recipe's readiness path (``/health`` unless the recipe says
otherwise) from spawn on, every ``readiness.interval_s``, and hands the server over at its first
200: that moment is the time to ready, bound by the recipe's readiness deadline. The row's
known-good request (its contract's probe) goes out at once and must be answered with its output
within ``first_request_bound_s`` of that first 200 (the hand-over, storing the log, counts
against it). Then the same request ``warm_requests`` times, one at a time: the first request's
latency over their median must stay within ``max_first_to_warm_ratio``.

A launch that never becomes ready fails with its log's last lines (prompts left out, secrets
masked); a deployment given by URL has started already and is ``invalid`` here.
"""

import asyncio
import json
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import ClassVar, Literal

from omniqual.checks.api_contract.cases import Case
from omniqual.checks.api_contract.exchange import Timeouts
from omniqual.checks.base import CheckContext, CheckOutcome, PointLaunch, verdict
from omniqual.checks.startup.judge import Findings, judge_first, judge_startup, judge_warm
from omniqual.checks.startup.params import StartupParams
from omniqual.checks.startup.request import known_good, row_endpoint, send
from omniqual.domain.evidence import Artifact
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.recipe import LaunchRecipe, RecipeKind
from omniqual.specs.contracts import contract_path, load_contract

ServePoint = Callable[[LaunchRecipe], AbstractAsyncContextManager[PointLaunch]]


class StartupCheck:
    kind: ClassVar[str] = "startup"
    params_model: ClassVar[type[StartupParams]] = StartupParams
    needs: ClassVar[Literal["server", "checkpoint", "launches"]] = "launches"
    measures: ClassVar[bool] = True  # time to ready and the first request's latency
    shares_start_ups: ClassVar[bool] = False  # the start-up is what it times

    async def run(self, ctx: CheckContext, params: StartupParams) -> CheckOutcome:
        recipe, serve_point = ctx.target.recipe, ctx.serve_point
        if recipe is None or recipe.kind is RecipeKind.URL or serve_point is None:
            return CheckOutcome(GateOutcome.INVALID, (
                "startup needs the row's launch recipe and a launcher: a deployment given by "
                "URL has started already, so its start-up cannot be watched",))  # fmt: skip
        model = ctx.row.get("model")
        path = contract_path(ctx.project_root / params.contracts_dir, model or "")
        if not model or not path.is_file():
            return CheckOutcome(GateOutcome.SKIPPED, (
                f"no contract for model {model!r} ({path}): the row has no known-good "
                "request",))  # fmt: skip
        endpoint = row_endpoint(load_contract(path), ctx.row)
        if endpoint is None:
            return CheckOutcome(
                GateOutcome.SKIPPED,
                (f"contract {path.name} declares no endpoint for this row ({ctx.row})",),
            )
        derived = recipe.model_copy(update={"id": f"{recipe.id}-startup"})
        found = Findings()
        found.effective |= {"recipe": derived.id, "readiness_path": recipe.readiness.path,
                            "readiness_interval_s": recipe.readiness.interval_s}  # fmt: skip
        logs = await _launch(ctx, params, derived, serve_point, known_good(endpoint), found)
        evidence = ctx.artifacts.put_artifact(
            json.dumps(found.effective, indent=1, sort_keys=True).encode(),
            media_type="application/json", role="startup-evidence", name="startup.json",
        )  # fmt: skip
        return CheckOutcome(
            verdict(found.failures, invalid=found.invalid),
            (*found.failures, *found.invalid), measurements=tuple(found.measurements),
            artifacts=(evidence, *logs), cases=tuple(found.cases),
            requested={"recipe": recipe.id, "api_mode": endpoint.api_mode,
                       "readiness_timeout_s": recipe.readiness.timeout_s,
                       "first_request_bound_s": params.first_request_bound_s,
                       "warm_requests": params.warm_requests,
                       "max_first_to_warm_ratio": params.max_first_to_warm_ratio},
            effective=found.effective,
        )  # fmt: skip


async def _launch(ctx: CheckContext, params: StartupParams, recipe: LaunchRecipe,
                  serve_point: ServePoint, case: Case, found: Findings,
                  ) -> tuple[Artifact, ...]:  # fmt: skip
    """Launch, judge the start-up and the requests; the launch's stored log, if any."""
    loop = asyncio.get_running_loop()
    health = recipe.readiness.path
    ctx.progress(f"startup: launching {recipe.id}, polling {health}", 0.0)
    entered = loop.time()
    async with serve_point(recipe) as point:
        handed = loop.time()
        logs = (point.log_artifact,) if point.log_artifact is not None else ()
        startup = point.startup
        ready = judge_startup(startup, recipe.readiness.timeout_s, health, params.tail_lines,
                              found)  # fmt: skip
        if not ready or point.make_client is None:
            return logs
        # The launcher's clock starts at spawn, inside the block: what the block took beyond
        # it (port, state file, storing the log) is time the server sat ready and unasked.
        handoff = max(0.0, handed - entered - startup.elapsed_s)
        within = max(0.001, params.first_request_bound_s - handoff)
        timeouts = Timeouts(max(within, params.request_timeout_s), params.job_timeout_s,
                            params.poll_interval_s)  # fmt: skip
        async with point.make_client() as client:
            ctx.progress("startup: the first request, as /health said ready", 0.2)
            first = await send(client, case, timeouts, within)
            if not judge_first(startup.elapsed_s, handoff, first, params, health,
                               case.api_mode, found):  # fmt: skip
                return logs  # no first answer to hold the warm ones against
            warm = []
            for index in range(params.warm_requests):
                ctx.progress(f"startup: warm request {index + 1}/{params.warm_requests}",
                             0.2 + 0.8 * index / params.warm_requests)  # fmt: skip
                warm.append(await send(client, case, timeouts, params.request_timeout_s))
        judge_warm(first, warm, params, case.api_mode, found)
    return logs
