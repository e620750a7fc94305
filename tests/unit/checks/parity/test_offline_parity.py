"""offline-parity (the reference_parity kind with ``implementation: offline``, SKILL G0-08) against
the fake server and a fake offline engine: the shipped spec passes a faithful server, fails one
whose served path drops or changes a parameter (another seed, another step count) and a
difference the official tolerance would let through, never reads a reference directory, and is
invalid where the offline engine cannot run or the checkpoint is not local."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest
import yaml

from omniqual.checks.base import CheckContext, CheckOutcome
from omniqual.checks.parity.reference import ReferenceParityCheck, ReferenceParityParams
from omniqual.deploy.reference_runner import OFFLINE_MODULE, offline_engine_args, run_reference
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.recipe import LaunchRecipe
from tests.fakes.fake_config import FakeFaults
from tests.fakes.fake_reference import FakeReferenceRunner
from tests.unit.checks.parity.test_reference_parity import make_ctx

ROOT = Path(__file__).resolve().parents[4]
SPEC = yaml.safe_load((ROOT / "gates/offline-parity.yaml").read_text(encoding="utf-8"))
PARAMS = ReferenceParityParams.model_validate(SPEC["params"])
RECIPE = LaunchRecipe.model_validate({
    "id": "sd3-tiny-fp32", "description": "d", "kind": "embedded", "pipeline": "sd3-tiny",
    "flags": {"dtype": "float32", "model-class-name": "StableDiffusion3Pipeline",
              "enforce-eager": True, "step-execution": False},
})  # fmt: skip


def _ctx(tmp_path: Path, faults: FakeFaults | None = None, *, local: bool = True) -> CheckContext:
    ctx = make_ctx(tmp_path, faults, local=local)
    gate = GateSpec(id="offline-parity", kind="reference_parity", version=1)
    target = dataclasses.replace(ctx.target, recipe=RECIPE)
    return dataclasses.replace(ctx, gate=gate, target=target)


def _run(ctx: CheckContext, runner: FakeReferenceRunner | None = None,
         params: ReferenceParityParams = PARAMS) -> CheckOutcome:  # fmt: skip
    return asyncio.run(ReferenceParityCheck(runner or FakeReferenceRunner()).run(ctx, params))


def test_a_faithful_server_passes_against_the_offline_engine_built_with_its_flags(
    tmp_path: Path,
) -> None:
    runner = FakeReferenceRunner()
    outcome = _run(_ctx(tmp_path), runner)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert len(outcome.cases) == 6  # 3 prompts x 2 seeds on the probe's shape
    (job,) = runner.jobs
    assert job.engine == "offline" and job.pipeline_class == "vllm_omni.Omni"
    assert job.engine_args == {"dtype": "float32", "model_class_name": "StableDiffusion3Pipeline",
                               "enforce_eager": True}  # fmt: skip
    assert job.dtype == "float32"  # the recipe's served dtype
    assert "offline engine" in str(outcome.effective["reference_source"])
    gallery = outcome.effective["parity"]
    assert isinstance(gallery, dict) and "offline engine" in str(gallery["reference_row"])


@pytest.mark.parametrize("faults", [FakeFaults(seed_offset=1), FakeFaults(steps_offset=3)])
def test_a_served_path_that_changes_a_parameter_fails(tmp_path: Path, faults: FakeFaults) -> None:
    outcome = _run(_ctx(tmp_path, faults))
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    assert "psnr" in outcome.reasons[0] and "below the minimum 40 dB" in outcome.reasons[0]
    assert "ssim" in outcome.reasons[1] and "below the minimum 0.99" in outcome.reasons[1]
    assert all(c.outcome is GateOutcome.FAILED for c in outcome.cases)


def test_a_difference_the_official_tolerance_allows_fails_here(tmp_path: Path) -> None:
    """Noise of sigma 4 (about 36 dB) is within the official pipeline's 30 dB, not within the
    offline engine's 40 dB: the same engine on the same weights leaves no room for it."""
    outcome = _run(_ctx(tmp_path), FakeReferenceRunner(noise_sigma=4.0))
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    psnr = [m.value for m in outcome.measurements if m.name.endswith("/psnr")]
    assert psnr and all(30.0 < value < 40.0 for value in psnr)


def test_a_count_mismatch_names_the_offline_engine(tmp_path: Path) -> None:
    outcome = _run(_ctx(tmp_path, FakeFaults(extra_outputs=1)))
    assert outcome.outcome is GateOutcome.FAILED
    assert "served 2 output(s), the offline engine 1" in outcome.reasons[0]


def test_a_reference_directory_is_never_read_and_a_remote_checkpoint_is_invalid(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "refs"
    directory.mkdir()
    params = PARAMS.model_copy(update={"reference": str(directory)})
    runner = FakeReferenceRunner()
    outcome = _run(_ctx(tmp_path), runner, params)
    assert outcome.outcome is GateOutcome.PASSED and len(runner.jobs) == 1, outcome.reasons
    remote = _run(_ctx(tmp_path, local=False), FakeReferenceRunner(), params)
    assert remote.outcome is GateOutcome.INVALID
    assert "the offline engine runs on the target's local checkpoint" in remote.reasons[0]


def test_a_flag_holding_a_launch_placeholder_is_invalid_not_dropped(tmp_path: Path) -> None:
    recipe = RECIPE.model_copy(update={"flags": {"deploy-config": "{recipe_dir}/deploy.yaml"}})
    ctx = _ctx(tmp_path)
    ctx = dataclasses.replace(ctx, target=dataclasses.replace(ctx.target, recipe=recipe))
    outcome = _run(ctx)
    assert outcome.outcome is GateOutcome.INVALID
    assert "--deploy-config holds a launch placeholder" in outcome.reasons[0]
    with pytest.raises(ValueError, match="placeholder"):
        offline_engine_args({"port": "{port}"})


def test_the_real_runner_starts_the_offline_program_and_reports_its_crash(tmp_path: Path) -> None:
    crash = tmp_path / "python"
    crash.write_text('#!/bin/sh\necho "argv: $2"\necho "RuntimeError: no CPU platform"\nexit 4\n')
    crash.chmod(0o755)
    params = PARAMS.model_copy(update={"python": str(crash)})
    outcome = asyncio.run(ReferenceParityCheck(run_reference).run(_ctx(tmp_path), params))
    assert outcome.outcome is GateOutcome.INVALID
    (reason,) = outcome.reasons
    assert reason.startswith("reference cannot run: the reference exited with code 4:")
    assert f"argv: {OFFLINE_MODULE}" in reason and "no CPU platform" in reason
