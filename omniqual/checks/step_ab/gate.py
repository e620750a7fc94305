"""The ``step_ab`` check kind: does step execution earn its keep on this row, measured against a
matched request-mode control?

The row's recipe (step mode) and its control (the same recipe with the params'
``execution_flags`` removed, nothing else changed) are launched side by side with the target's
launcher, ``launches`` times: each launch round starts both arms afresh, gives each
``warmup_repetitions`` discarded passes, then alternates them one repetition at a time (step,
control, step, ...) so a drift of the host hits both alike. Both arms do the same work with the
same seeds (:mod:`omniqual.checks.step_ab.trial`). A launch's figure is the mean of its
repetitions.

Launch to launch: two launches of one server differ by more than repetitions on one launch do
(see :mod:`omniqual.loadgen.regression`), so a difference between one step launch and one
control launch may be nothing but that. The unit compared is therefore the launch: the rule of
:func:`omniqual.loadgen.regression.compare` (the perf gate's) on the arms' launch figures, whose
spread holds the launch-to-launch variation (and each launch's own scatter) in full. Verdict,
read as an improvement: the ``confidence`` Welch interval on the relative change of the step
arm's mean launch figure against the control's, held to ``-min_improvement``:

* ``passed`` when the whole interval lies at or below it (the predeclared improvement is met at
  that confidence): step mode may be recommended for the hypothesis;
* ``failed`` when the whole interval lies above it (missed at that confidence): request mode is
  recommended, with the numbers;
* otherwise one more launch round while ``max_launches`` and the gate's budget allow, then
  ``invalid: inconclusive`` with the interval.

A failed request, a long request answered before its cut, or an arm that does not serve makes the
result ``invalid`` (nothing to compare), never a verdict. The budget is spent measuring: start-ups
are bounded by ``startup_deadline_s`` and run beside other work. Evidence: ``step-ab.json``
(every repetition's figure and samples per arm and launch, each launch's figure, the interval,
the recipes) and each launch's server log.
"""

import asyncio
import json
import statistics
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
        run = _Run(ctx, params, endpoint, self.trial or trial_for(params))
        logs: list[Artifact] = []
        while run.wants_launch():
            async with ctx.serve_point(recipes[0]) as step, ctx.serve_point(recipes[1]) as control:
                launched = (step, control)
                logs += [a.log_artifact for a in launched if a.log_artifact is not None]
                down = [f"the {arm} arm ({launch.startup.recipe_id}) did not serve on launch "
                        f"{run.launch + 1}: {launch.startup.reason} after "
                        f"{launch.startup.elapsed_s:.1f} s"
                        for arm, launch in zip(ARMS, launched, strict=True)
                        if launch.make_client is None]  # fmt: skip
                if down:
                    return CheckOutcome(GateOutcome.INVALID, tuple(down), artifacts=tuple(logs))
                await run.measure(launched)
        return run.outcome(recipes[0].id, recipes[1].id, logs)


class _Run:
    """The launch rounds of one step-ab run: their repetitions per arm, and the comparison of
    the arms' launch figures once there are enough of them."""

    def __init__(self, ctx: CheckContext, params: StepAbParams, endpoint: EndpointKind,
                 trial: Trial) -> None:  # fmt: skip
        self.ctx, self.params, self.endpoint, self.trial = ctx, params, endpoint, trial
        self.results: dict[str, list[list[TrialResult]]] = {arm: [] for arm in ARMS}
        """Per arm, per launch, its measured repetitions."""
        self.warmups: dict[str, list[list[TrialResult]]] = {arm: [] for arm in ARMS}
        self.comparison: Comparison | None = None
        self.loop = asyncio.get_running_loop()
        self.spent = 0.0
        """Seconds spent measuring (start-ups excluded), against the gate's budget."""
        self.longest_round = 0.0
        self.finished = False

    @property
    def launch(self) -> int:
        """Launch rounds measured so far."""
        return len(self.results["step"])

    async def _one(self, launch: PointLaunch, arm: int, index: int, warmup: bool) -> TrialResult:
        assert launch.make_client is not None
        what = "warm-up" if warmup else f"repetition {index + 1}"
        self.ctx.progress(f"step-ab: launch {self.launch}, {ARMS[arm]} arm, {what}", None)
        async with launch.make_client() as client:
            # Seeds follow the repetition index alone: every launch of both arms gets the
            # same requests.
            result = await self.trial(client, self.params, self.endpoint, index)
        (self.warmups if warmup else self.results)[ARMS[arm]][-1].append(result)
        return result

    def wants_launch(self) -> bool:
        """Whether another launch round is due: fewer than ``launches``, or the interval still
        straddles the threshold and one more round fits ``max_launches`` and the budget."""
        if self.finished:
            return False
        if self.launch < self.params.launches:
            return True
        budget = self.ctx.gate.budget_s
        fits = budget is None or self.spent + self.longest_round <= budget
        return self.launch < self.params.max_launches and fits

    def errors(self) -> list[str]:
        return [f"{arm} arm, launch {n + 1}, repetition {i + 1}: {e}" for arm in ARMS
                for n, launch in enumerate(self.results[arm])
                for i, r in enumerate(launch) for e in r.errors]  # fmt: skip

    def values(self, arm: str) -> list[list[float]]:
        """Per launch, the figures of its repetitions."""
        return [[r.value for r in launch if r.value is not None] for launch in self.results[arm]]

    def launch_means(self, arm: str) -> list[float]:
        return [statistics.fmean(v) for v in self.values(arm) if v]

    async def measure(self, launched: tuple[PointLaunch, PointLaunch]) -> None:
        """One launch round on ``launched`` (step, control), then the comparison when there
        are launches enough."""
        began = self.loop.time()
        for name in ARMS:
            self.results[name].append([])
            self.warmups[name].append([])
        for index in range(self.params.warmup_repetitions):
            for arm in range(2):
                await self._one(launched[arm], arm, -1 - index, warmup=True)
        for index in range(self.params.repetitions):
            for arm in range(2):
                await self._one(launched[arm], arm, index, warmup=False)
            if self.errors():
                self.finished = True
                return
        took = self.loop.time() - began
        self.spent += took
        self.longest_round = max(self.longest_round, took)
        if self.launch < self.params.launches:
            return
        step, control = self.launch_means("step"), self.launch_means("request")
        if statistics.fmean(control) <= 0:
            self.finished = True
            return
        self.comparison = compare(Spread.of(step), Spread.of(control),
                                  threshold=-self.params.min_improvement,
                                  direction=Direction.LOWER,
                                  confidence=self.params.confidence)  # fmt: skip
        self.finished = self.comparison.decision is not Decision.UNDECIDED

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
            reasons = [f"inconclusive after {self.launch} launches per arm ({params.repetitions} "
                       f"repetitions each): {describe(c, params)}"]  # fmt: skip
        block: dict[str, Any] = {
            "hypothesis": params.hypothesis, "min_improvement": params.min_improvement,
            "confidence": params.confidence, "recipes": {"step": step_id, "request": control_id},
            "launches": self.launch,
            "arms": {arm: [{"launch": n + 1, "value": r.value, "samples": list(r.samples),
                            "errors": list(r.errors)}
                           for n, launch in enumerate(self.results[arm]) for r in launch]
                     for arm in ARMS},
            "launch_means": {arm: self.launch_means(arm) for arm in ARMS},
            "warmups": {arm: [r.value for launch in self.warmups[arm] for r in launch]
                        for arm in ARMS},
            "comparison": None if c is None else {
                "change": c.change, "low": c.low, "high": c.high, "df": c.df,
                "threshold": c.threshold, "decision": c.decision.value},
            "recommendation": recommendation, "outcome": outcome.value, "reasons": reasons,
        }  # fmt: skip
        summary = self.ctx.artifacts.put_artifact(
            json.dumps(block, indent=1).encode(), media_type="application/json",
            role="summary", name="step-ab.json")  # fmt: skip
        measurements = [Measurement(name=f"{arm}.launch{n + 1}.rep{i + 1}", value=v, unit="s")
                        for arm in ARMS for n, launch in enumerate(self.values(arm))
                        for i, v in enumerate(launch)]  # fmt: skip
        measurements += [Measurement(name=f"{arm}.launch{n + 1}", value=v, unit="s",
                                     samples=params.repetitions)
                         for arm in ARMS for n, v in enumerate(self.launch_means(arm))]  # fmt: skip
        if c is not None:
            measurements.append(Measurement(
                name="relative_change", value=c.change, unit="1",
                samples=len(self.launch_means("step")), bound=c.threshold,
                ok=c.decision is Decision.WITHIN))  # fmt: skip
        return CheckOutcome(
            outcome, tuple(reasons), tuple(measurements), (summary, *logs),
            requested={"hypothesis": params.hypothesis, "min_improvement": params.min_improvement,
                       "confidence": params.confidence, "repetitions": params.repetitions,
                       "launches": params.launches, "max_launches": params.max_launches},
            effective={"step_ab": block},
        )  # fmt: skip


def describe(c: Comparison, params: StepAbParams) -> str:
    return (
        f"step mode {c.change:+.1%} against request mode, {c.confidence:.0%} interval "
        f"[{c.low:+.1%}, {c.high:+.1%}], hypothesis {-params.min_improvement:+.0%} or better"
    )
