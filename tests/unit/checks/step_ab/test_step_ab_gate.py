"""The step-ab gate on fakes, on a virtual clock: a fake step server that frees itself within one
step after a cut beats a fake request server that needs the rest of the long request (passed,
step mode may be recommended); two identical fakes miss the hypothesis (failed, request mode
recommended); a spread too wide to decide is inconclusive, and so is a difference that launches
of one server differ by; the control differs from the row's recipe only by the execution
flag."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omniqual.checks.base import CheckContext, PointLaunch, TargetInfo
from omniqual.checks.step_ab import StepAbCheck, StepAbParams
from omniqual.checks.step_ab.recipes import arm_recipes
from omniqual.checks.step_ab.trial import TrialResult
from omniqual.deploy.launcher import StartupOutcome
from omniqual.domain.axes import RowKey
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.recipe import LaunchRecipe
from omniqual.loadgen.workload import EndpointKind
from tests.fakes.memory_sink import MemorySink
from tests.unit.loadgen.conftest import _run_virtual

BASE = LaunchRecipe(id="qwen-step", description="step row", kind="embedded",
                    pipeline="qwen-image-tiny",
                    flags={"model-class-name": "QwenImagePipeline",
                           "step-execution": True})  # fmt: skip
PARAMS = StepAbParams(hypothesis="cancel_frees_within_step", min_improvement=0.2,
                      cut_after_s=1.0, queue_after_s=0.3, trials=3)  # fmt: skip


@dataclass
class FakeServer:
    """A long request of ``long_s`` cut at ``cut_after_s``; a server that frees within a step
    needs at most one ``step_s`` more, one that does not needs the rest of the long request."""

    frees_within_step: bool
    long_s: float = 4.0
    step_s: float = 0.1
    short_s: float = 0.2
    jitter: float = 0.02
    rng: random.Random = field(default_factory=lambda: random.Random(3))
    launch_scales: tuple[float, ...] = (1.0,)
    """Per launch, in turn: how much slower than nominal that launch serves (launch noise)."""
    launches: int = 0
    scale: float = 1.0

    async def __aenter__(self) -> FakeServer:
        return self

    async def __aexit__(self, *_: object) -> None:
        return None


async def fake_trial(client: Any, params: StepAbParams, _e: EndpointKind, _i: int) -> TrialResult:
    server: FakeServer = client
    loop = asyncio.get_running_loop()
    samples = []
    for _ in range(params.trials):
        await asyncio.sleep(params.cut_after_s)
        cut_at = loop.time()
        rest = server.step_s if server.frees_within_step else server.long_s - params.cut_after_s
        await asyncio.sleep((rest + server.short_s) * server.scale
                            + server.rng.uniform(0, server.jitter))  # fmt: skip
        samples.append(loop.time() - cut_at)
    return TrialResult(sum(samples) / len(samples), tuple(samples))


@dataclass
class FakeLauncher:
    servers: dict[str, FakeServer]
    launched: list[LaunchRecipe] = field(default_factory=list)

    @asynccontextmanager
    async def serve(self, recipe: LaunchRecipe) -> AsyncIterator[PointLaunch]:
        self.launched.append(recipe)
        server = self.servers[recipe.id.split("--", 1)[1]]
        server.scale = server.launch_scales[server.launches % len(server.launch_scales)]
        server.launches += 1
        startup = StartupOutcome(recipe_id=recipe.id, expected=recipe.expect, became_ready=True,
                                 reason="ready", exit_code=None, elapsed_s=1.0, log_path=None,
                                 log_tail=(), command=("vllm", "serve"),
                                 expected_error_matched=None)  # fmt: skip
        yield PointLaunch(
            startup,
            TargetInfo(url="http://fake.invalid", recipe=recipe),
            None,
            make_client=lambda: server,  # type: ignore[arg-type,return-value]
        )


def run(servers: dict[str, FakeServer], params: StepAbParams = PARAMS) -> tuple[Any, FakeLauncher]:
    launcher = FakeLauncher(servers)
    key = RowKey((("model", "qwen-image-tiny"), ("task", "t2i"),
                  ("api_mode", "images-generations"), ("execution", "step/1")))  # fmt: skip
    ctx = CheckContext(gate=GateSpec(id="step-ab", kind="step_ab", version=1), row=key,
                       target=TargetInfo(url=None, recipe=BASE), artifacts=MemorySink(),
                       project_root=Path("."), make_client=lambda: None,  # type: ignore[arg-type,return-value]
                       serve_point=launcher.serve)  # fmt: skip
    return _run_virtual(StepAbCheck(trial=fake_trial).run(ctx, params)), launcher


def test_a_server_that_frees_within_a_step_passes_and_may_be_recommended() -> None:
    outcome, launcher = run({"step-mode": FakeServer(True), "request-mode": FakeServer(False)})
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    block = outcome.effective["step_ab"]
    assert block["recommendation"] == "step mode may be recommended"
    assert block["comparison"]["high"] <= -0.2
    # Three launch rounds, each starting both arms afresh side by side.
    arms = ["qwen-step--step-mode", "qwen-step--request-mode"]
    assert [r.id for r in launcher.launched] == arms * 3
    assert [len(block["launch_means"][arm]) for arm in ("step", "request")] == [3, 3]


def test_identical_servers_miss_the_hypothesis_and_request_mode_is_recommended() -> None:
    outcome, _ = run({"step-mode": FakeServer(False), "request-mode": FakeServer(False)})
    assert outcome.outcome is GateOutcome.FAILED
    assert "request mode recommended" in outcome.reasons[0]
    assert outcome.effective["step_ab"]["recommendation"] == "request mode recommended"


def test_a_spread_too_wide_to_decide_is_inconclusive() -> None:
    noisy = {"step-mode": FakeServer(False, long_s=2.2, jitter=1.5),
             "request-mode": FakeServer(False, long_s=2.2, jitter=1.5)}  # fmt: skip
    params = PARAMS.model_copy(update={"min_improvement": 0.05, "launches": 2,
                                       "max_launches": 2})  # fmt: skip
    outcome, _ = run(noisy, params)
    assert outcome.outcome is GateOutcome.INVALID
    assert outcome.reasons[0].startswith("inconclusive after 2 launches per arm (3 repetitions "
                                         "each)")  # fmt: skip


def test_a_difference_within_launch_noise_is_no_speedup() -> None:
    # Two servers that behave alike, each launch of which serves up to 40 % off nominal: the
    # first step launch happens to be fast. One launch per arm would read that as a speedup
    # beyond the hypothesis; counted across launches it is noise.
    alike = {"step-mode": FakeServer(False, launch_scales=(0.6, 1.2, 1.4, 0.8)),
             "request-mode": FakeServer(False, launch_scales=(1.0, 0.7, 1.3, 1.1))}  # fmt: skip
    outcome, launcher = run(alike)
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert outcome.reasons[0].startswith("inconclusive after 4 launches per arm")
    block = outcome.effective["step_ab"]
    assert block["recommendation"] is None and block["comparison"]["decision"] == "undecided"
    assert len(launcher.launched) == 8


def test_launch_means_reach_the_comparison_the_perf_rule_makes() -> None:
    from omniqual.loadgen.regression import Direction, Spread, compare

    servers = {
        "step-mode": FakeServer(True, launch_scales=(1.0, 1.1, 0.9)),
        "request-mode": FakeServer(False, launch_scales=(1.0, 0.9, 1.1)),
    }
    outcome, _ = run(servers)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    block = outcome.effective["step_ab"]
    means = block["launch_means"]
    expected = compare(Spread.of(means["step"]), Spread.of(means["request"]), threshold=-0.2,
                       direction=Direction.LOWER, confidence=0.95)  # fmt: skip
    assert block["comparison"]["low"] == expected.low
    assert block["comparison"]["high"] == expected.high


def test_the_control_drops_only_the_execution_flag() -> None:
    arms = arm_recipes(BASE, PARAMS)
    assert not isinstance(arms, str)
    step, control = arms
    assert step.flags == BASE.flags
    assert control.flags == {"model-class-name": "QwenImagePipeline"}
    plain = BASE.model_copy(update={"flags": {"model-class-name": "QwenImagePipeline"}})
    assert isinstance(arm_recipes(plain, PARAMS), str)
