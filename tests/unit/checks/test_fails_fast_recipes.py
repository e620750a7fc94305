"""The shipped embedded refusal recipes against the shipped fails-fast gate, fed the startup
messages vLLM-Omni 0.30 printed on CPU (research notes and the previous campaign): the two real
refusals pass, the Wan fp8 kernel-signature crash names no restriction and fails with it."""

import asyncio
from pathlib import Path

import pytest
import yaml

from omniqual.checks.base import CheckContext, CheckOutcome, LaunchAttempt, TargetInfo
from omniqual.checks.fails_fast import FailsFastCheck, FailsFastParams
from omniqual.deploy.launcher import StartupOutcome
from omniqual.domain.axes import RowKey
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.recipe import Expectation, LaunchRecipe
from omniqual.specs.recipes import load_recipe
from tests.fakes.memory_sink import MemorySink

ROOT = Path(__file__).resolve().parents[3]
GATE = yaml.safe_load((ROOT / "gates" / "fails-fast.yaml").read_text(encoding="utf-8"))
PARAMS = FailsFastParams.model_validate(GATE["params"])
SEEN = {
    "sd3-tiny-step": (
        "ERROR [core.py:88] EngineCore failed to start.",
        "ValueError: step_execution=True requires a pipeline implementing prepare_encode(),"
        " denoise_step(), step_scheduler(), and post_decode(); StableDiffusion3Pipeline does"
        " not support that contract.",
    ),
    "sd3-tiny-layerwise-offload": (
        "RuntimeError: Orchestrator initialization failed: pin_memory=True requires a CUDA or"
        " other accelerator backend; no pinned memory allocator is available on this system.",
    ),
    "wan-t2v-tiny-fp8": (
        "  File \"vllm/_custom_ops.py\", line 1544, in scaled_fp8_quant",
        "RuntimeError: _C::static_scaled_fp8_quant() expected at most 0 argument(s) but"
        " received 4 argument(s)",
        "INFO shutting down",
    ),
}


def judge(recipe: LaunchRecipe, tail: tuple[str, ...], elapsed: float) -> CheckOutcome:
    async def attempt(given: LaunchRecipe) -> LaunchAttempt:
        return LaunchAttempt(StartupOutcome(
            recipe_id=recipe.id, expected=recipe.expect, became_ready=False, reason="exited",
            exit_code=1, elapsed_s=elapsed, log_path=None, log_tail=tail, command=("vllm",),
            expected_error_matched=None,
        ), None)  # fmt: skip

    ctx = CheckContext(
        gate=GateSpec(id="fails-fast", kind="fails_fast", version=GATE["version"]),
        row=RowKey((("model", "tiny"),)), target=TargetInfo(url=None, recipe=recipe),
        artifacts=MemorySink(), project_root=ROOT,
        make_client=lambda: (_ for _ in ()).throw(AssertionError),  # type: ignore[arg-type,return-value]
        launch_expecting_failure=attempt,
    )  # fmt: skip
    return asyncio.run(FailsFastCheck().run(ctx, PARAMS))


def refusal_recipe(recipe_id: str) -> LaunchRecipe:
    recipe = load_recipe(ROOT / "runners" / "embedded" / f"{recipe_id}.yaml").recipe
    assert recipe.expect is Expectation.REJECTS and recipe.expected_error
    return recipe


@pytest.mark.parametrize("recipe_id", ["sd3-tiny-step", "sd3-tiny-layerwise-offload"])
def test_the_real_refusals_prove_their_restriction(recipe_id: str) -> None:
    outcome = judge(refusal_recipe(recipe_id), SEEN[recipe_id], 17.6)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert outcome.effective["refusals"] == PARAMS.attempts == 2


def test_the_wan_fp8_kernel_crash_is_not_a_refusal() -> None:
    outcome = judge(refusal_recipe("wan-t2v-tiny-fp8"), SEEN["wan-t2v-tiny-fp8"], 20.0)
    assert outcome.outcome is GateOutcome.FAILED
    assert outcome.effective["attempts"] == 1
    (reason,) = outcome.reasons
    assert "does not name the restriction" in reason
    assert "crash: 'RuntimeError: _C::static_scaled_fp8_quant() expected at most 0" in reason


@pytest.mark.parametrize("recipe_id", sorted(SEEN))
def test_an_out_of_memory_crash_never_proves_a_refusal_recipe(recipe_id: str) -> None:
    oom = ("torch.OutOfMemoryError: cannot allocate 2.00 GiB (3.00 GiB required)",)
    outcome = judge(refusal_recipe(recipe_id), oom, 5.0)
    assert outcome.outcome is GateOutcome.FAILED
    assert "crash: 'torch.OutOfMemoryError" in outcome.reasons[0]
