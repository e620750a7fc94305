"""Sweep points measured once per run: an offload row's sweep after the resident row's reads the
reference and its own point from that sweep (no launch) and names the row they were measured
for; a different run (evidence store), base recipe or params launches again; parity is judged
afresh, so a row whose point differs from the reference still fails."""

import asyncio
from typing import Any

from omniqual.checks.base import CheckContext, CheckOutcome, TargetInfo
from omniqual.checks.offload_sweep import OffloadSweepCheck
from omniqual.checks.offload_sweep.params import OffloadSweepParams
from omniqual.domain.axes import RowKey
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.recipe import LaunchRecipe
from tests.fakes.fake_points import Behaviour, FakePoints
from tests.fakes.memory_sink import MemorySink
from tests.unit.checks.offload_sweep.test_offload_sweep import BASE, ROOT, noisy, params, row

LAYER = '{"mode":"layer","components":["dit"],"pin_memory":false}'
NOPIN = BASE.model_copy(update={
    "id": "sd3-tiny-layer-offload-nopin", "description": "layer offload without pinning",
    "flags": {**BASE.flags, "diffusion-offload-config": LAYER},
    "row": {"offload": "layerwise-nopin"},
})  # fmt: skip


def sweep(fake: FakePoints, sink: MemorySink, key: RowKey, recipe: LaunchRecipe = BASE,
          p: OffloadSweepParams | None = None) -> CheckOutcome:  # fmt: skip
    ctx = CheckContext(
        gate=GateSpec(id="offload-sweep", kind="offload_sweep", version=1), row=key,
        target=TargetInfo(url=None, recipe=recipe, label=recipe.id), artifacts=sink,
        project_root=ROOT, make_client=lambda: (_ for _ in ()).throw(AssertionError("no server")),
        serve_point=fake.serve,
    )  # fmt: skip
    return asyncio.run(OffloadSweepCheck().run(ctx, p or params(repetitions=3)))


def points(outcome: CheckOutcome) -> dict[str, dict[str, Any]]:
    block = outcome.effective["sweep"]
    assert isinstance(block, dict)
    return {str(p["name"]): p for p in block["points"]}  # type: ignore[index,union-attr]


# As vLLM-Omni 0.30 does for the tiny SD3 (it declares no resident DiT paths), the DLO points
# with resident blocks refuse: no DLO point serves, so no reference is launched again (DL-02).
REFUSING = {"layerwise-default": "refuse", "layer-nopin-r1": "refuse", "layer-nopin-r2": "refuse"}


def fakes(behaviours: dict[str, Behaviour] | None = None) -> FakePoints:
    return FakePoints({**REFUSING, **(behaviours or {})}, mutate=noisy)


def test_an_offload_row_after_the_resident_row_launches_nothing_and_names_the_source() -> None:
    fake, sink = fakes(), MemorySink()
    resident = sweep(fake, sink, row())
    launched = len(fake.launched)
    nopin = sweep(fake, sink, row("layerwise-nopin"), NOPIN)
    cpu = sweep(fake, sink, row("cpu-offload"), NOPIN)
    assert len(fake.launched) == launched == 6, "the offload rows' points were measured already"
    assert resident.effective["points_measured_for"] == {}
    assert nopin.effective["points_measured_for"] == {
        "resident": str(row()), "layer-nopin-r0": str(row())}  # fmt: skip
    assert cpu.effective["points_measured_for"] == {
        "resident": str(row()), "cpu-offload": str(row())}  # fmt: skip
    assert nopin.outcome is GateOutcome.PASSED and cpu.outcome is GateOutcome.PASSED
    for name in ("resident", "layer-nopin-r0"):
        theirs, ours = points(resident)[name], points(nopin)[name]
        assert ours["latency_samples_s"] == theirs["latency_samples_s"]
        assert ours["peak_pss_bytes_steady"] == theirs["peak_pss_bytes_steady"]
    kept = {a.sha256 for a in resident.artifacts}
    assert {a.sha256 for a in nopin.artifacts[1:]} <= kept, "the measured point's own evidence"


def test_the_resident_row_after_an_offload_row_reuses_its_two_points_only() -> None:
    fake, sink = fakes(), MemorySink()
    sweep(fake, sink, row("layerwise-nopin"), NOPIN)
    resident = sweep(fake, sink, row())
    assert [r.id.split("--")[1] for r in fake.launched] == [
        "resident", "layer-nopin-r0", "layer-nopin-r1", "layer-nopin-r2", "cpu-offload",
        "layerwise-default",
    ]  # fmt: skip
    assert set(resident.effective["points_measured_for"]) == {"resident", "layer-nopin-r0"}  # type: ignore[arg-type]


def test_another_run_another_base_or_other_params_launch_again() -> None:
    fake = fakes()
    first = MemorySink()
    sweep(fake, first, row("layerwise-nopin"), NOPIN)
    sweep(fake, MemorySink(), row("layerwise-nopin"), NOPIN)
    assert len(fake.launched) == 4, "a new evidence store is a new run"
    other = NOPIN.model_copy(update={"env": {"OMP_NUM_THREADS": "1"}})
    sweep(fake, first, row("layerwise-nopin"), other)
    assert len(fake.launched) == 6, "a different serving environment is another deployment"
    sweep(fake, first, row("layerwise-nopin"), NOPIN, params(repetitions=4))
    assert len(fake.launched) == 8, "other measurement params measure again"


def test_a_row_of_another_endpoint_never_reads_this_endpoints_outputs() -> None:
    fake, sink = fakes(), MemorySink()
    sweep(fake, sink, row("layerwise-nopin"), NOPIN)
    chat = RowKey(tuple((k, "chat-completions" if k == "api_mode" else v)
                        for k, v in row("layerwise-nopin").items))  # fmt: skip
    outcome = sweep(fake, sink, chat, NOPIN)
    assert len(fake.launched) == 4, "the chat row's cases are other requests: measured again"
    assert outcome.effective["points_measured_for"] == {}


def test_parity_is_judged_afresh_for_a_shared_point() -> None:
    fake, sink = fakes({"layer-nopin-r0": "mutate"}), MemorySink()
    resident = sweep(fake, sink, row())
    nopin = sweep(fake, sink, row("layerwise-nopin"), NOPIN)
    assert resident.outcome is GateOutcome.FAILED
    assert nopin.outcome is GateOutcome.FAILED
    assert nopin.reasons[0].startswith("point 'layer-nopin-r0': output differs")
