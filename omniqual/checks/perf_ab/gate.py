"""The ``perf_ab`` check kind: is the row's recipe slower than a reference measured beside it,
on this host, now?

A committed baseline judges a run across the hosts of its class, and on a 2-vCPU guest class
sessions of one build differ by 5-7 %: its interval cannot be narrower than that, whatever the
run does (:mod:`omniqual.loadgen.sessions`). Measured against a reference on the same host in
the same minutes, that spread cancels. Each launch round starts both arms afresh (the row's
recipe, the candidate; and ``reference_recipe``, or the row's own recipe again for an A/A run),
gives each ``warmup_repetitions`` discarded passes of the perf gate's fixed work, then
alternates them one repetition at a time, the arm that goes first alternating between rounds,
so a drift of the host hits both alike. A round's figure per arm is the mean latency of its
repetitions; the verdict is the paired rule of :mod:`omniqual.checks.perf_ab.pairs` over the
rounds:

* ``failed`` when the whole interval on the candidate's relative change lies above
  ``threshold``;
* ``passed`` when the whole interval lies at or below it;
* otherwise one more round while ``max_launches`` and the gate's budget allow, then
  ``invalid: inconclusive`` with the interval.

A failed request, or an arm that does not serve, makes the result ``invalid`` (nothing to
compare), never a verdict. The budget counts measuring, not start-ups. Evidence: ``perf-ab.json``
(every repetition's figure per arm and round, the rounds' ratios, the interval, the recipes) and
each launch's server log.
"""

import asyncio
import json
import statistics
from typing import Any, ClassVar, Literal

from omniqual.checks.base import CheckContext, CheckOutcome, CheckParams, PointLaunch
from omniqual.checks.load_binding import endpoint_for
from omniqual.checks.perf.work import run_repetition
from omniqual.checks.perf_ab.pairs import paired_change
from omniqual.checks.perf_ab.params import PerfAbParams
from omniqual.domain.evidence import Artifact, Measurement
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.recipe import Expectation, LaunchRecipe
from omniqual.loadgen.regression import Comparison, Decision
from omniqual.loadgen.workload import EndpointKind
from omniqual.specs.recipes import load_recipes
from omniqual.specs.source import SpecError

ARMS = ("candidate", "reference")
METRIC = "latency_mean"


def _bounded(recipe: LaunchRecipe, arm: str, deadline_s: float) -> LaunchRecipe:
    readiness = recipe.readiness.model_copy(
        update={"timeout_s": min(recipe.readiness.timeout_s, deadline_s)})  # fmt: skip
    return recipe.model_copy(update={"id": f"{recipe.id}--{arm}", "readiness": readiness,
                                     "expect": Expectation.SERVES, "expected_error": None})


def arm_recipes(ctx: CheckContext,
                params: PerfAbParams) -> tuple[LaunchRecipe, LaunchRecipe] | str:  # fmt: skip
    """(candidate, reference), or why there is no pair to launch."""
    base = ctx.target.recipe
    if base is None or ctx.serve_point is None:
        return "perf-ab needs the row's launch recipe and a launcher for its two arms"
    reference = base
    if params.reference_recipe is not None:
        try:
            reference = load_recipes(ctx.project_root / "runners")[params.reference_recipe].recipe
        except (SpecError, KeyError) as exc:
            return f"reference_recipe {params.reference_recipe!r}: {exc}"
        # Both arms are launched on the row's prepared checkpoint: a reference of another
        # model would be measured on this one's weights under its own name.
        if (reference.pipeline, reference.model) != (base.pipeline, base.model):
            return (f"reference_recipe {reference.id!r} serves "
                    f"{reference.pipeline or reference.model!r}, the row's recipe {base.id!r} "
                    f"{base.pipeline or base.model!r}: both arms run on the row's checkpoint, "
                    "so the reference must serve the same model (another release, flags or "
                    "environment of it)")  # fmt: skip
    deadline = params.startup_deadline_s
    return _bounded(base, ARMS[0], deadline), _bounded(reference, ARMS[1], deadline)


class PerfAbCheck:
    kind: ClassVar[str] = "perf_ab"
    params_model: ClassVar[type[CheckParams]] = PerfAbParams
    needs: ClassVar[Literal["server", "checkpoint", "launches"]] = "launches"
    measures: ClassVar[bool] = True  # request latency of two arms
    # Both arms may start beside other groups' work: the figures are request latencies taken
    # once both are up with the host held, and an arm that does not serve is invalid.
    shares_start_ups: ClassVar[bool] = True

    async def run(self, ctx: CheckContext, params: CheckParams) -> CheckOutcome:
        assert isinstance(params, PerfAbParams)
        endpoint = endpoint_for(ctx.row.get("api_mode"))
        if endpoint is None:
            why = f"api_mode {ctx.row.get('api_mode')!r} has no HTTP endpoint to measure"
            return CheckOutcome(GateOutcome.SKIPPED, (why,))
        recipes = arm_recipes(ctx, params)
        if isinstance(recipes, str):
            return CheckOutcome(GateOutcome.INVALID, (recipes,))
        assert ctx.serve_point is not None
        run = _Run(ctx, params, endpoint)
        logs: list[Artifact] = []
        while run.wants_round():
            async with ctx.serve_point(recipes[0]) as cand, ctx.serve_point(recipes[1]) as ref:
                launched = (cand, ref)
                logs += [a.log_artifact for a in launched if a.log_artifact is not None]
                down = [f"the {arm} arm ({launch.startup.recipe_id}) did not serve in round "
                        f"{run.rounds + 1}: {launch.startup.reason} after "
                        f"{launch.startup.elapsed_s:.1f} s"
                        for arm, launch in zip(ARMS, launched, strict=True)
                        if launch.make_client is None]  # fmt: skip
                if down:
                    return CheckOutcome(GateOutcome.INVALID, tuple(down), artifacts=tuple(logs))
                await run.measure(launched)
        return run.outcome((recipes[0].id, recipes[1].id), logs)


class _Run:
    """The launch rounds of one perf-ab run: per arm and round, its repetitions' figures."""

    def __init__(self, ctx: CheckContext, params: PerfAbParams, endpoint: EndpointKind) -> None:
        self.ctx, self.params, self.endpoint = ctx, params, endpoint
        self.values: dict[str, list[list[float]]] = {arm: [] for arm in ARMS}
        self.errors: list[str] = []
        self.comparison: Comparison | None = None
        self.loop = asyncio.get_running_loop()
        self.spent = 0.0
        self.longest_round = 0.0
        self.finished = False

    @property
    def rounds(self) -> int:
        return len(self.values[ARMS[0]])

    def wants_round(self) -> bool:
        if self.finished:
            return False
        if self.rounds < self.params.launches:
            return True
        budget = self.ctx.gate.budget_s
        fits = budget is None or self.spent + self.longest_round <= budget
        return self.rounds < self.params.launch_ceiling and fits

    def means(self, arm: str) -> list[float]:
        return [statistics.fmean(v) for v in self.values[arm] if v]

    async def _one(self, launch: PointLaunch, arm: str, index: int, warmup: bool) -> None:
        assert launch.make_client is not None
        what = "warm-up" if warmup else f"repetition {index + 1}"
        self.ctx.progress(f"perf-ab: round {self.rounds}, {arm} arm, {what}", None)
        async with launch.make_client() as client:
            # The repetition index alone picks the seeds: both arms get the same requests.
            rep, _ = await run_repetition(client, self.params, self.endpoint, index, warmup,
                                          launch=self.rounds)  # fmt: skip
        if rep.failed_requests:
            self.errors.append(f"{arm} arm, round {self.rounds}, {what}: {rep.failed_requests} "
                               f"of {self.params.requests} requests failed "
                               f"({', '.join(rep.errors)})")  # fmt: skip
        value = rep.metric(METRIC)
        if not warmup and value is not None:
            self.values[arm][-1].append(value)

    async def measure(self, launched: tuple[PointLaunch, PointLaunch]) -> None:
        """One round on ``launched`` (candidate, reference), then the comparison once there
        are rounds enough."""
        began = self.loop.time()
        for arm in ARMS:
            self.values[arm].append([])
        # The arm that goes first alternates between rounds: neither always follows the other.
        order = (0, 1) if self.rounds % 2 else (1, 0)
        for index in range(self.params.warmup_repetitions):
            for side in order:
                await self._one(launched[side], ARMS[side], -1 - index, warmup=True)
        for index in range(self.params.min_repetitions):
            for side in order:
                await self._one(launched[side], ARMS[side], index, warmup=False)
            if self.errors:
                self.finished = True
                return
        took = self.loop.time() - began
        self.spent += took
        self.longest_round = max(self.longest_round, took)
        if self.rounds < self.params.launches:
            return
        self.comparison = paired_change(self.means(ARMS[0]), self.means(ARMS[1]),
                                        threshold=self.params.threshold,
                                        confidence=self.params.confidence)  # fmt: skip
        self.finished = (self.comparison is None
                         or self.comparison.decision is not Decision.UNDECIDED)  # fmt: skip

    def outcome(self, recipes: tuple[str, str], logs: list[Artifact]) -> CheckOutcome:
        params, c = self.params, self.comparison
        if self.errors:
            outcome, reasons = GateOutcome.INVALID, ["no comparison: " + self.errors[0],
                                                     *self.errors[1:]]  # fmt: skip
        elif c is None:
            outcome, reasons = GateOutcome.INVALID, ["no comparison: a round's figure is not "
                                                     "positive"]  # fmt: skip
        elif c.decision is Decision.REGRESSED:
            outcome, reasons = GateOutcome.FAILED, [f"{METRIC} regressed: {describe(c)}"]
        elif c.decision is Decision.WITHIN:
            outcome, reasons = GateOutcome.PASSED, []
        else:
            outcome = GateOutcome.INVALID
            reasons = [f"inconclusive after {self.rounds} rounds ({params.min_repetitions} "
                       f"repetitions per arm each): {describe(c)}"]  # fmt: skip
        block: dict[str, Any] = {
            "metric": METRIC, "threshold": params.threshold, "confidence": params.confidence,
            "recipes": dict(zip(ARMS, recipes, strict=True)), "rounds": self.rounds,
            "values": {arm: self.values[arm] for arm in ARMS},
            "round_means": {arm: self.means(arm) for arm in ARMS},
            "comparison": None if c is None else {
                "change": c.change, "low": c.low, "high": c.high, "df": c.df,
                "threshold": c.threshold, "decision": c.decision.value},
            "outcome": outcome.value, "reasons": reasons,
        }  # fmt: skip
        summary = self.ctx.artifacts.put_artifact(
            json.dumps(block, indent=1).encode(), media_type="application/json",
            role="summary", name="perf-ab.json")  # fmt: skip
        measurements = [Measurement(name=f"{arm}.round{n + 1}", value=v, unit="s",
                                    samples=params.min_repetitions)
                        for arm in ARMS for n, v in enumerate(self.means(arm))]  # fmt: skip
        if c is not None:
            measurements.append(Measurement(
                name="relative_change", value=c.change, unit="1", samples=self.rounds,
                bound=c.threshold, ok=c.decision is Decision.WITHIN))  # fmt: skip
        return CheckOutcome(
            outcome, tuple(reasons), tuple(measurements), (summary, *logs),
            requested={"threshold": params.threshold, "confidence": params.confidence,
                       "repetitions": params.min_repetitions, "launches": params.launches,
                       "max_launches": params.launch_ceiling,
                       "reference_recipe": params.reference_recipe},
            effective={"perf_ab": block},
        )  # fmt: skip


def describe(c: Comparison) -> str:
    return (f"the candidate {c.change:+.1%} against the reference beside it, "
            f"{c.confidence:.0%} interval [{c.low:+.1%}, {c.high:+.1%}] over {(c.df or 0) + 1} "
            f"paired rounds, threshold {c.threshold:.0%} (lower is better)")
