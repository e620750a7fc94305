"""The ``step_ab`` check kind: does step execution earn its keep on this row, measured against a
matched request-mode control?

The row's recipe (step mode) and its control (the same recipe with the params'
``execution_flags`` removed, nothing else changed) are launched side by side with the target's
launcher; each arm gets ``warmup_repetitions`` discarded passes, then the arms alternate one
repetition at a time (step, control, step, ...) so a drift of the host hits both alike. Both arms
do the same work with the same seeds (:mod:`omniqual.checks.step_ab.trial`).

Verdict (the rule of :mod:`omniqual.loadgen.regression`, read as an improvement): the
``confidence`` Welch interval on the relative change of the step arm's mean figure against the
control's, held to ``-min_improvement``:

* ``passed`` when the whole interval lies at or below it (the predeclared improvement is met at
  that confidence): step mode may be recommended for the hypothesis;
* ``failed`` when the whole interval lies above it (missed at that confidence): request mode is
  recommended, with the numbers;
* otherwise one more pair of repetitions while ``max_repetitions`` and the gate's budget allow,
  then ``invalid: inconclusive`` with the interval.

A failed request, a long request answered before its cut, or an arm that does not serve makes the
result ``invalid`` (nothing to compare), never a verdict. Evidence: ``step-ab.json`` (every
repetition's figure and samples per arm, the interval, the recipes) and each arm's server log.
"""

import asyncio
import json
from typing import Any, ClassVar, Literal

from omniqual.checks.base import CheckContext, CheckOutcome, CheckParams, PointLaunch
from omniqual.checks.load_binding import endpoint_for
from omniqual.checks.step_ab.params import StepAbParams
from omniqual.checks.step_ab.recipes import arm_recipes
from omniqual.checks.step_ab.trial import Trial, TrialResult, trial_for
from omniqual.domain.evidence import Artifact, Measurement
from omniqual.domain.outcomes import GateOutcome
from omniqual.loadgen.regression import Comparison, Decision, Direction, Spread, compare
from omniqual.loadgen.workload import EndpointKind

ARMS = ("step", "request")
RECOMMEND_STEP = "step mode may be recommended"
RECOMMEND_REQUEST = "request mode recommended"


class StepAbCheck:
    kind: ClassVar[str] = "step_ab"
    params_model: ClassVar[type[CheckParams]] = StepAbParams
    needs: ClassVar[Literal["server", "checkpoint", "launches"]] = "launches"
    measures: ClassVar[bool] = True  # latency of two arms
    # Both arms may start beside other groups' work: the figures are request latencies taken
    # once both are up with the host held, the budget clock starts there too, and an arm that
    # does not serve makes the result invalid, never a verdict.
    shares_start_ups: ClassVar[bool] = True

    def __init__(self, trial: Trial | None = None) -> None:
        self.trial = trial

    async def run(self, ctx: CheckContext, params: CheckParams) -> CheckOutcome:
        assert isinstance(params, StepAbParams)
        endpoint = endpoint_for(ctx.row.get("api_mode"))
        if endpoint is None:
            why = f"api_mode {ctx.row.get('api_mode')!r} has no HTTP endpoint to measure"
            return CheckOutcome(GateOutcome.SKIPPED, (why,))
        base = ctx.target.recipe
        if base is None or ctx.serve_point is None:
            why = "step-ab needs the row's launch recipe and a launcher for its two arms"
            return CheckOutcome(GateOutcome.INVALID, (why,))
        recipes = arm_recipes(base, params)
        if isinstance(recipes, str):
            return CheckOutcome(GateOutcome.INVALID, (recipes,))
        trial = self.trial or trial_for(params)
        async with ctx.serve_point(recipes[0]) as step, ctx.serve_point(recipes[1]) as control:
            logs = [a for a in (step.log_artifact, control.log_artifact) if a is not None]
            down = [f"the {arm} arm ({launch.startup.recipe_id}) did not serve: "
                    f"{launch.startup.reason} after {launch.startup.elapsed_s:.1f} s"
                    for arm, launch in zip(ARMS, (step, control), strict=True)
                    if launch.make_client is None]  # fmt: skip
            if down:
                return CheckOutcome(GateOutcome.INVALID, tuple(down), artifacts=tuple(logs))
            run = _Run(ctx, params, endpoint, trial, (step, control))
            await run.measure()
        return run.outcome(recipes[0].id, recipes[1].id, logs)


class _Run:
    def __init__(self, ctx: CheckContext, params: StepAbParams, endpoint: EndpointKind,
                 trial: Trial, launches: tuple[PointLaunch, PointLaunch]) -> None:  # fmt: skip
        self.ctx, self.params, self.endpoint, self.trial = ctx, params, endpoint, trial
        self.launches = launches
        self.results: dict[str, list[TrialResult]] = {arm: [] for arm in ARMS}
        self.warmups: dict[str, list[TrialResult]] = {arm: [] for arm in ARMS}
        self.comparison: Comparison | None = None
        self.loop = asyncio.get_running_loop()
        self.started = self.loop.time()
        self.longest = 0.0

    async def _one(self, arm: int, index: int, warmup: bool) -> TrialResult:
        launch = self.launches[arm]
        assert launch.make_client is not None
        what = "warm-up" if warmup else f"repetition {index + 1}"
        self.ctx.progress(f"step-ab: {ARMS[arm]} arm, {what}", None)
        began = self.loop.time()
        async with launch.make_client() as client:
            result = await self.trial(client, self.params, self.endpoint, index)
        self.longest = max(self.longest, self.loop.time() - began)
        (self.warmups if warmup else self.results)[ARMS[arm]].append(result)
        return result

    def _fits(self) -> bool:
        budget = self.ctx.gate.budget_s
        return budget is None or self.loop.time() - self.started + 2 * self.longest <= budget

    def errors(self) -> list[str]:
        return [f"{arm} arm, repetition {i + 1}: {e}" for arm in ARMS
                for i, r in enumerate(self.results[arm]) for e in r.errors]  # fmt: skip

    def values(self, arm: str) -> list[float]:
        return [r.value for r in self.results[arm] if r.value is not None]

    async def measure(self) -> None:
        params = self.params
        for index in range(params.warmup_repetitions):
            for arm in range(2):
                await self._one(arm, -1 - index, warmup=True)
        index = 0
        while True:
            for arm in range(2):
                await self._one(arm, index, warmup=False)
            index += 1
            if self.errors():
                return
            if index < params.min_repetitions:
                continue
            step, control = Spread.of(self.values("step")), Spread.of(self.values("request"))
            if control.mean <= 0:
                return
            self.comparison = compare(step, control, threshold=-params.min_improvement,
                                      direction=Direction.LOWER,
                                      confidence=params.confidence)  # fmt: skip
            if self.comparison.decision is not Decision.UNDECIDED:
                return
            if index >= params.max_repetitions or not self._fits():
                return

    def outcome(self, step_id: str, control_id: str, logs: list[Artifact]) -> CheckOutcome:
        params, c = self.params, self.comparison
        errors = self.errors()
        recommendation = None
        if errors:
            outcome, reasons = GateOutcome.INVALID, ["no comparison: " + errors[0], *errors[1:]]
        elif c is None:
            outcome, reasons = GateOutcome.INVALID, ["no comparison: the control's figure is "
                                                    "not positive"]  # fmt: skip
        elif c.decision is Decision.WITHIN:
            outcome, recommendation = GateOutcome.PASSED, RECOMMEND_STEP
            reasons = []
        elif c.decision is Decision.REGRESSED:
            outcome, recommendation = GateOutcome.FAILED, RECOMMEND_REQUEST
            reasons = [f"{params.hypothesis} missed: {describe(c, params)}; {RECOMMEND_REQUEST}"]
        else:
            outcome = GateOutcome.INVALID
            reasons = [f"inconclusive after {len(self.values('step'))} repetitions per arm: "
                       f"{describe(c, params)}"]  # fmt: skip
        block: dict[str, Any] = {
            "hypothesis": params.hypothesis, "min_improvement": params.min_improvement,
            "confidence": params.confidence, "recipes": {"step": step_id, "request": control_id},
            "arms": {arm: [{"value": r.value, "samples": list(r.samples),
                            "errors": list(r.errors)} for r in self.results[arm]]
                     for arm in ARMS},
            "warmups": {arm: [r.value for r in self.warmups[arm]] for arm in ARMS},
            "comparison": None if c is None else {
                "change": c.change, "low": c.low, "high": c.high, "df": c.df,
                "threshold": c.threshold, "decision": c.decision.value},
            "recommendation": recommendation, "outcome": outcome.value, "reasons": reasons,
        }  # fmt: skip
        summary = self.ctx.artifacts.put_artifact(
            json.dumps(block, indent=1).encode(), media_type="application/json",
            role="summary", name="step-ab.json")  # fmt: skip
        measurements = [Measurement(name=f"{arm}.rep{i + 1}", value=v, unit="s")
                        for arm in ARMS for i, v in enumerate(self.values(arm))]  # fmt: skip
        if c is not None:
            measurements.append(Measurement(
                name="relative_change", value=c.change, unit="1",
                samples=len(self.values("step")), bound=c.threshold,
                ok=c.decision is Decision.WITHIN))  # fmt: skip
        return CheckOutcome(
            outcome, tuple(reasons), tuple(measurements), (summary, *logs),
            requested={"hypothesis": params.hypothesis, "min_improvement": params.min_improvement,
                       "confidence": params.confidence,
                       "min_repetitions": params.min_repetitions,
                       "max_repetitions": params.max_repetitions},
            effective={"step_ab": block},
        )  # fmt: skip


def describe(c: Comparison, params: StepAbParams) -> str:
    return (
        f"step mode {c.change:+.1%} against request mode, {c.confidence:.0%} interval "
        f"[{c.low:+.1%}, {c.high:+.1%}], hypothesis {-params.min_improvement:+.0%} or better"
    )
