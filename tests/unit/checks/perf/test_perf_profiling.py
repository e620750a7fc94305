"""A server launched with a profiler is never measured for a perf claim (SKILL G6-13, G6-17):
its run is invalid naming the setting, so no baseline can be set from it, while the same server
without the profiler is judged as usual."""

from __future__ import annotations

from pathlib import Path

import pytest

from omniqual.checks.perf.profiling import PROFILED, profiled_reason, profiler_settings
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.recipe import LaunchRecipe
from tests.unit.checks.perf.test_perf_launches import RECIPE, THREE, launched_run

SLOWER = [0.130]  # 30 % slower than the baseline: judged, it fails


@pytest.mark.parametrize("change", [
    {"flags": {"profiler-config": '{"profiler": "torch", "torch_profiler_dir": "/tmp/t"}'}},
    {"flags": {"enable-diffusion-pipeline-profiler": True}},
    {"env": {"VLLM_TORCH_PROFILER_DIR": "/tmp/traces"}},
])
def test_a_profiled_server_is_invalid_naming_the_setting(
    tmp_path: Path, change: dict[str, object]
) -> None:
    profiled = RECIPE.model_copy(update=change)
    outcome, _ = launched_run(tmp_path, SLOWER, THREE, recipe=profiled)
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    (reason,) = [r for r in outcome.reasons if r.startswith(PROFILED)]
    assert "never a perf claim or a baseline" in reason


def test_the_same_server_without_the_profiler_is_judged(tmp_path: Path) -> None:
    outcome, _ = launched_run(tmp_path, SLOWER, THREE)
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons


def test_settings_are_read_from_the_command_and_its_environment() -> None:
    words = ["vllm", "serve", "m", "--omni", "--profiler-config.torch_profiler_dir=/t"]
    assert profiler_settings(words, {}) == ["--profiler-config.torch_profiler_dir=/t"]
    assert profiler_settings(["--profile-steps", "3"], {"VLLM_TORCH_PROFILER_DIR": ""}) == []
    assert profiled_reason(None) is None  # a URL deployment: no recipe says how it was launched
    plain = LaunchRecipe(id="r", description="d", kind="embedded", pipeline="sd3-tiny")
    assert profiled_reason(plain) is None
