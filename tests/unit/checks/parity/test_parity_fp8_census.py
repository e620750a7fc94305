"""F8-01: fp8 is active only where the module census shows linears carrying an fp8 quant method.
The census comes from the runtime dump of the candidate's pipeline built with its own
quantization flags (a fake dump here: no torch, no subprocess); per prefix, block indices folded.
Outputs that differ from the baseline never make up for a census of zero, and a census that
cannot be taken leaves fp8 unproven."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml

from omniqual.checks.base import CheckContext, TargetInfo
from omniqual.checks.parity import candidate_census
from omniqual.checks.parity.candidate_census import (
    Census,
    census_by_prefix,
    census_signal,
    take_census,
)
from omniqual.checks.parity.candidate_params import CandidateParityParams, FastPath
from omniqual.checks.parity.candidate_proof import (
    SILENT_FALLBACK,
    Activity,
    Signal,
    judge_activity,
)
from omniqual.deploy.runtime_params import RuntimeLinear, RuntimeParamList, RuntimeParamsError
from omniqual.domain.axes import RowKey
from omniqual.domain.gate import GateSpec
from omniqual.domain.recipe import LaunchRecipe
from tests.fakes.memory_sink import MemorySink

ROOT = Path(__file__).resolve().parents[4]
SPEC = yaml.safe_load((ROOT / "gates" / "parity.yaml").read_text())
PARAMS = CandidateParityParams.model_validate(SPEC["params"])
FP8 = PARAMS.fast_path("quantization=fp8-online-dit")
FP8_RECIPE = LaunchRecipe.model_validate(
    yaml.safe_load((ROOT / "runners" / "embedded" / "sd3-tiny-fp8.yaml").read_text())
)
UNQUANTIZED = "UnquantizedLinearMethod"
ONLINE_FP8 = "Fp8PerTensorOnlineLinearMethod"


def linears(method: str, blocks: int = 2) -> tuple[RuntimeLinear, ...]:
    """A small DiT: per block a fused qkv and an output projection, plus two outer linears."""
    found = [RuntimeLinear(name="transformer.context_embedder", layer="ReplicatedLinear",
                           quant_method=UNQUANTIZED)]  # fmt: skip
    for block in range(blocks):
        found += [
            RuntimeLinear(name=f"transformer.blocks.{block}.attn.to_qkv",
                          layer="QKVParallelLinear", quant_method=method),
            RuntimeLinear(name=f"transformer.blocks.{block}.attn.to_out",
                          layer="RowParallelLinear", quant_method=method),
        ]  # fmt: skip
    found.append(RuntimeLinear(name="transformer.proj_out", layer="ReplicatedLinear",
                               quant_method=UNQUANTIZED))  # fmt: skip
    return tuple(found)


def census_of(method: str) -> Census:
    return Census(linears(method), None, "meta-instantiation", ("--quantization", "fp8"))


def signal(feature: str, source: str, active: bool | None) -> Signal:
    return Signal(feature, source, active, f"{source}: {active}")


def test_fp8_path_declares_its_census() -> None:
    assert FP8 is not None and FP8.census is not None
    assert FP8.census.min_quantized == 1


def test_census_folds_block_indices_per_prefix() -> None:
    assert census_by_prefix(linears(ONLINE_FP8)) == {
        "transformer.blocks.*.attn.to_out": {ONLINE_FP8: 2},
        "transformer.blocks.*.attn.to_qkv": {ONLINE_FP8: 2},
        "transformer.context_embedder": {UNQUANTIZED: 1},
        "transformer.proj_out": {UNQUANTIZED: 1},
    }
    # Only the block index folds: later indices name different layers of every block.
    feed_forward = [RuntimeLinear(name=f"transformer.blocks.{b}.ff.net.{i}", layer="Linear",
                                  quant_method=ONLINE_FP8)
                    for b in (0, 1) for i in (0, 2)]  # fmt: skip
    assert census_by_prefix(feed_forward) == {
        "transformer.blocks.*.ff.net.0": {ONLINE_FP8: 2},
        "transformer.blocks.*.ff.net.2": {ONLINE_FP8: 2},
    }


def test_a_census_of_unquantized_linears_reads_inactive() -> None:
    assert FP8 is not None and FP8.census is not None
    found = census_signal(FP8.feature, FP8.census, census_of(UNQUANTIZED))
    assert found.source == "census" and found.active is False and found.required
    assert "0 of 6 linears" in found.detail


def test_a_census_with_fp8_linears_names_them_by_prefix() -> None:
    assert FP8 is not None and FP8.census is not None
    found = census_signal(FP8.feature, FP8.census, census_of(ONLINE_FP8))
    assert found.active is True
    assert "4 of 6 linears" in found.detail
    assert f"transformer.blocks.*.attn.to_qkv: {ONLINE_FP8} x2" in found.detail


def test_differing_outputs_do_not_make_up_for_a_census_of_zero() -> None:
    assert FP8 is not None and FP8.census is not None
    census = census_signal(FP8.feature, FP8.census, census_of(UNQUANTIZED))
    verdict = judge_activity(FP8, [signal(FP8.feature, "output", True), census])
    assert verdict.failure is not None, verdict
    assert SILENT_FALLBACK in verdict.failure and "0 of 6 linears" in verdict.failure


def test_a_census_alone_is_no_proof_the_path_computed() -> None:
    assert FP8 is not None and FP8.census is not None
    census = census_signal(FP8.feature, FP8.census, census_of(ONLINE_FP8))
    same = judge_activity(FP8, [signal(FP8.feature, "output", False), census])
    assert same.failure is not None and SILENT_FALLBACK in same.failure
    shown = judge_activity(FP8, [signal(FP8.feature, "output", True), census])
    assert shown == Activity()


def test_without_a_census_fp8_is_not_shown_active() -> None:
    assert FP8 is not None and FP8.census is not None
    absent = census_signal(FP8.feature, FP8.census, Census(None, "no checkpoint here", "", ()))
    verdict = judge_activity(FP8, [signal(FP8.feature, "output", True), absent])
    assert verdict.failure is None and verdict.invalid is not None
    assert "no checkpoint here" in verdict.invalid


def test_a_path_without_a_census_is_judged_as_before() -> None:
    path = FastPath(feature="cache_policy=cache_dit", lossy=True, tolerance="cache")
    assert judge_activity(path, [signal(path.feature, "output", True)]) == Activity()
    inactive = judge_activity(path, [signal(path.feature, "output", False)])
    assert inactive.failure is not None and SILENT_FALLBACK in inactive.failure


def context(tmp_path: Path, recipe: LaunchRecipe | None, checkpoint: Path | None) -> CheckContext:
    return CheckContext(
        gate=GateSpec(id="parity", kind="candidate_parity", version=4),
        row=RowKey((("model", "sd3-tiny"),)),
        target=TargetInfo(url="http://fake.invalid", recipe=recipe, checkpoint_dir=checkpoint),
        artifacts=MemorySink(), project_root=ROOT,
        make_client=lambda: (_ for _ in ()).throw(AssertionError),  # type: ignore[arg-type,return-value]
    )  # fmt: skip


def test_the_census_builds_the_candidate_with_its_own_quantization_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[dict[str, Any]] = []

    def fake_dump(checkpoint: Path, **options: Any) -> RuntimeParamList:
        calls.append({"checkpoint": checkpoint, **options})
        return RuntimeParamList(
            source="meta-instantiation", pipeline_class="StableDiffusion3Pipeline",
            dtype="bfloat16", components=(), linears=linears(UNQUANTIZED),
        )  # fmt: skip

    monkeypatch.setattr(candidate_census, "dump_runtime_params", fake_dump)
    census = asyncio.run(take_census(context(tmp_path, FP8_RECIPE, tmp_path), PARAMS))
    assert census.problem is None and census.linears == linears(UNQUANTIZED)
    (call,) = calls
    assert call["checkpoint"] == tmp_path
    assert call["quantization"] == ("--quantization", "fp8")
    assert call["dtype"] == "bfloat16"
    assert call["env"]["OMNIQUAL_CPU_PLATFORM"] == "1"


def test_a_census_that_cannot_be_taken_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(checkpoint: Path, **options: Any) -> RuntimeParamList:
        raise RuntimeParamsError("omniqual.deploy.runtime_param_dump exited with code 1: boom")

    monkeypatch.setattr(candidate_census, "dump_runtime_params", broken)
    census = asyncio.run(take_census(context(tmp_path, FP8_RECIPE, tmp_path), PARAMS))
    assert census.linears is None and census.problem is not None and "boom" in census.problem
    url = asyncio.run(take_census(context(tmp_path, None, None), PARAMS))
    assert url.linears is None and url.problem is not None and "URL" in url.problem
