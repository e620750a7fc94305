"""Every cache backend of vLLM-Omni 0.30 but Cache-DiT (``diffusion/cache/selector.py``) on the
SD3 tiny pipeline on CPU, each through its row's own recipe (``runners/embedded/sd3-tiny-*-cache``):
one real start-up per backend (``vllm serve … --omni --cache-backend X`` by omniqual's launcher,
on the session's checkpoint), judged as the fails-fast gate judges an attempt (its
``message_findings`` with the shipped spec's ``actionable_patterns`` against the recipe's
``expected_error``). 0.30 serves none of them on StableDiffusion3Pipeline: the runner enables the
backend while the worker initializes, and it raises. tea_cache, sea_cache and step_cache name the
restriction (their rows' fails-fast passes); mag_cache names only an unknown model type, which the
gate fails as not actionable. The gate's second attempt (a stable restriction) is the campaign's,
not relaunched here; Cache-DiT, which serves, is parity's."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from omniqual.checks.base import verdict
from omniqual.checks.fails_fast import FailsFastParams, message_findings
from omniqual.deploy.embedded.catalog import BuiltCheckpoint
from omniqual.deploy.launcher import LAUNCH_MARKER, probe_startup
from omniqual.domain.outcomes import GateOutcome
from omniqual.specs.recipes import load_recipes
from tests.integration.embedded.embedded_server import EMBEDDED_MARKS

ROOT = Path(__file__).resolve().parents[3]
# fails-fast is a function-track gate (gates/fails-fast.yaml); the file name matches no rule.
pytestmark = [*EMBEDDED_MARKS, pytest.mark.function, pytest.mark.alone]  # start-up deadlines

GATE = FailsFastParams.model_validate(
    yaml.safe_load((ROOT / "gates" / "fails-fast.yaml").read_text())["params"]
)
# policy: (recipe, what 0.30 raises at start-up, the gate's failure or None when it passes)
PINNED: dict[str, tuple[str, str, str | None]] = {
    "tea_cache": ("sd3-tiny-tea-cache", "Invalid TeaCache configuration: \"Cannot find coefficients"
                  " for SD3Transformer2DModel", None),
    "mag_cache": ("sd3-tiny-mag-cache", "Unknown model type: 'SD3Transformer2DModel'. Available"
                  " types: ['FluxTransformer2DModel', 'Flux2Transformer2DModel']",
                  "the error matches none of actionable_patterns"),
    "sea_cache": ("sd3-tiny-sea-cache", "SeaCache does not support pipeline type"
                  " StableDiffusion3Pipeline", None),
    "step_cache": ("sd3-tiny-step-cache", "step_cache backend does not support"
                   " StableDiffusion3Pipeline. Supported: ['DreamZeroPipeline']", None),
}  # fmt: skip


@pytest.mark.parametrize("policy", sorted(PINNED))
def test_cache_backend_on_sd3_is_refused_at_startup_as_pinned(
    policy: str, checkpoints: Callable[[str], BuiltCheckpoint], tmp_path: Path
) -> None:
    recipe_id, raised, failure = PINNED[policy]
    recipe = load_recipes(ROOT / "runners")[recipe_id].recipe
    assert recipe.flags == {"cache-backend": policy} and recipe.row["cache_policy"] == policy
    assert recipe.expected_error is not None
    log = tmp_path / "server.log"
    startup = probe_startup(
        recipe, model=str(checkpoints("sd3-tiny").path), log_path=log, state_dir=tmp_path / "state",
        recipe_dir=ROOT / "runners" / "embedded",
    )  # fmt: skip
    text = log.read_text(errors="replace")
    text = text[text.rfind(LAUNCH_MARKER) :]
    print(policy, startup.reason, startup.exit_code, f"{startup.elapsed_s:.1f}s")
    assert not startup.became_ready and startup.reason == "exited", startup.log_tail
    assert startup.exit_code not in (None, 0) and startup.elapsed_s <= GATE.deadline_s
    assert ["--cache-backend", policy] == list(startup.command[-2:])
    assert re.search(r"Orchestrator initialization failed: .*" + re.escape(raised), text), (
        startup.log_tail
    )
    findings, matched = message_findings(
        text, recipe.expected_error, GATE.actionable_patterns, f"{recipe_id} server log"
    )
    assert matched["expected_error"], "the recipe's expected_error names the refusal"
    if failure is None:
        assert verdict(findings) is GateOutcome.PASSED, findings
    else:
        (finding,) = findings
        assert verdict(findings) is GateOutcome.FAILED and failure in finding
        assert "so it is not actionable" in finding and "Unknown model type" in finding
