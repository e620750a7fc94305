"""CFG-parallel on the embedded target: the SD3 tiny pipeline with ``--cfg-parallel-size 2``
(``runners/embedded/sd3-tiny-cfg-parallel2.yaml``), started by omniqual's launcher and judged by
the shipped fails-fast gate (the row's one gate, ``matrices/embedded-cpu.yaml``).

vLLM-Omni 0.30 on a CPU build of torch neither serves it nor refuses it: both ranks initialize,
each rank's output thread dies asking torch for its accelerator (there is none), and the start-up
warm-up waits forever. The gate fails it as a hang, which is what keeps the row from reading as
refused (`unsupported`) or served; the proof that two ranks ran is the log's two CFG workers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from omniqual.checks.base import CheckContext, LaunchAttempt, TargetInfo
from omniqual.checks.fails_fast import FailsFastCheck, FailsFastParams
from omniqual.deploy.embedded.catalog import BuiltCheckpoint
from omniqual.deploy.launcher import LAUNCH_MARKER, probe_startup
from omniqual.domain.axes import RowKey
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.recipe import LaunchRecipe
from omniqual.specs.recipes import load_recipes
from omniqual.specs.source import load_spec
from tests.fakes.memory_sink import MemorySink
from tests.integration.embedded.embedded_server import EMBEDDED_MARKS

ROOT = Path(__file__).resolve().parents[3]
# fails-fast is a function-track gate (gates/fails-fast.yaml); the file name matches no rule.
pytestmark = [*EMBEDDED_MARKS, pytest.mark.function, pytest.mark.alone]  # start-up deadlines


def test_cfg_parallel_2_on_cpu_hangs_in_its_warm_up_and_fails_fast_fails_it(
    checkpoints: Callable[[str], BuiltCheckpoint], tmp_path: Path
) -> None:
    recipe = load_recipes(ROOT / "runners")["sd3-tiny-cfg-parallel2"].recipe
    assert recipe.flags == {"cfg-parallel-size": 2}
    assert recipe.row["topology"] == "cfg-parallel2"
    gate, _ = load_spec(ROOT / "gates" / "fails-fast.yaml", GateSpec)
    params = FailsFastParams.model_validate(gate.params)
    log = tmp_path / "server.log"
    sink = MemorySink()
    bounds: list[float] = []

    async def attempt(bounded: LaunchRecipe) -> LaunchAttempt:
        bounds.append(bounded.readiness.timeout_s)
        startup = await asyncio.to_thread(
            probe_startup, bounded, model=str(checkpoints("sd3-tiny").path), log_path=log,
            state_dir=tmp_path / "state", recipe_dir=ROOT / "runners" / "embedded",
        )  # fmt: skip
        stored = sink.put_artifact(log, media_type="text/plain", role="server-log",
                                   name="server.log")  # fmt: skip
        return LaunchAttempt(startup, stored)

    ctx = CheckContext(
        gate=gate, row=RowKey((("model", "sd3-tiny"), ("topology", "cfg-parallel2"))),
        target=TargetInfo(url=None, recipe=recipe), artifacts=sink, project_root=ROOT,
        make_client=lambda: (_ for _ in ()).throw(AssertionError),  # type: ignore[arg-type,return-value]
        launch_expecting_failure=attempt,
    )  # fmt: skip
    outcome = asyncio.run(FailsFastCheck().run(ctx, params))
    text = log.read_text(errors="replace")
    text = text[text.rfind(LAUNCH_MARKER) :]
    print(outcome.outcome.value, *outcome.reasons, sep="\n  ")
    # One attempt, bounded near the gate's deadline: a recipe expected to serve that does not is
    # disproved by its first start-up, and a hang is given up soon after the deadline.
    assert bounds == [params.deadline_s + params.hang_margin_s]
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    assert any("neither became ready nor exited" in r and "a hang" in r for r in outcome.reasons)
    # Two ranks ran (the knob was applied, not ignored), and each one's output thread died.
    assert "DiffusionWorker_CFG0" in text and "DiffusionWorker_CFG1" in text
    assert text.count("current_accelerator().type") >= 2, text[-3000:]
    assert "dummy run to warm up the model" in text
