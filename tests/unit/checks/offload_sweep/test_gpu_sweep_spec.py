"""The GPU sweep spec (gates/offload-sweep-gpu.yaml) against the fake launcher: each model's
resident row runs only that model's points, each offload row its own point, and every offload
config a point launches is one vLLM-Omni 0.30's own parser accepts."""

import asyncio
import json
from pathlib import Path

import pytest
import yaml

from omniqual.checks.base import CheckContext, TargetInfo
from omniqual.checks.offload_sweep import OffloadSweepCheck
from omniqual.checks.offload_sweep.check import _points_for_row
from omniqual.checks.offload_sweep.params import OffloadSweepParams, expand
from omniqual.domain.axes import RowKey
from omniqual.domain.gate import GateSpec
from omniqual.domain.recipe import LaunchRecipe
from tests.fakes.fake_points import FakePoints
from tests.fakes.memory_sink import MemorySink
from tests.integration.embedded.embedded_presence import INSTALL_HINT
from tests.requirements import require_module

ROOT = Path(__file__).resolve().parents[4]
PARAMS = OffloadSweepParams.model_validate(
    yaml.safe_load((ROOT / "gates" / "offload-sweep-gpu.yaml").read_text())["params"]
)
WAN = "Wan-AI/Wan2.2-T2V-A14B-Diffusers"


def launched_for(model: str, offload: str, recipe_file: str) -> list[str]:
    raw = yaml.safe_load((ROOT / "runners" / "templates" / recipe_file).read_text())
    base = LaunchRecipe.model_validate(raw)
    fake = FakePoints({})
    key = RowKey((("model", model), ("task", "t2i"), ("api_mode", "images-generations"),
                  ("offload", offload)))  # fmt: skip
    ctx = CheckContext(
        gate=GateSpec(id="offload-sweep-gpu", kind="offload_sweep", version=1), row=key,
        target=TargetInfo(url=None, recipe=base), artifacts=MemorySink(), project_root=ROOT,
        make_client=lambda: (_ for _ in ()).throw(AssertionError()), serve_point=fake.serve,
    )  # fmt: skip
    # The template models have no contract here: the gate stops before launching anything.
    outcome = asyncio.run(OffloadSweepCheck().run(ctx, PARAMS))
    assert fake.launched == [] and "no contract for model" in outcome.reasons[0]
    chosen = _points_for_row(ctx, PARAMS)
    assert not isinstance(chosen, str)
    return [p.name for p in chosen[0]]


def test_wan_resident_row_sweeps_allgather_and_rank_local_resident_blocks() -> None:
    names = launched_for(WAN, "resident", "gpu-wan22-t2v-usp2.yaml")
    assert names == ["resident", "dlo-allgather", *(f"dlo-rank-local-r{k}"
                                                    for k in (0, 8, 16, 24, 32, 40))]  # fmt: skip


def test_rank_local_row_runs_the_reference_and_its_own_point() -> None:
    names = launched_for(WAN, "dlo-no-allgather", "gpu-wan22-t2v-dlo-rank-local.yaml")
    assert names == ["resident", "dlo-rank-local-r0"]


def test_qwen_image_resident_row_sweeps_resident_layers() -> None:
    names = launched_for("Qwen/Qwen-Image", "resident", "gpu-qwen-image.yaml")
    assert names == ["resident", *(f"layerwise-r{k}" for k in (0, 15, 30, 45, 60))]


@pytest.mark.parametrize("spec", ["offload-sweep.yaml", "offload-sweep-gpu.yaml"])
def test_every_offload_config_parses_with_vllm_omni(spec: str) -> None:
    # Without vLLM-Omni this skips (fails in CI); with it but no such module, a release moved
    # the parser and this fails everywhere, naming the module to look for.
    config = require_module("vllm_omni.diffusion.offloader.config", INSTALL_HINT,
                            require_variable="OMNIQUAL_REQUIRE_EMBEDDED")  # fmt: skip
    raw_params = yaml.safe_load((ROOT / "gates" / spec).read_text())["params"]
    for point in expand(OffloadSweepParams.model_validate(raw_params).points):
        raw = point.flags.get("diffusion-offload-config")
        if isinstance(raw, str):
            assert config.parse_diffusion_offload_config(json.loads(raw)) is not None, point.name
