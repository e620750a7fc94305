"""Gate ``offload-sweep`` with fake point launches (in-process fake servers, no sockets): a point
whose output differs fails the gate, a point without a memory series is invalid, a hang at
startup is bounded by the deadline and recorded, a refusal is recorded with its message, and
each offload row runs only the reference and its own point."""

import asyncio
import io
import random
from pathlib import Path
from typing import Any

import yaml
from PIL import Image

from omniqual.checks.base import CheckContext, CheckOutcome, TargetInfo
from omniqual.checks.offload_sweep import OffloadSweepCheck
from omniqual.checks.offload_sweep.params import OffloadSweepParams
from omniqual.domain.axes import RowKey
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.recipe import LaunchRecipe
from tests.fakes.fake_points import Behaviour, FakePoints
from tests.fakes.memory_sink import MemorySink

ROOT = Path(__file__).resolve().parents[4]
SPEC = yaml.safe_load((ROOT / "gates" / "offload-sweep.yaml").read_text())
BASE = LaunchRecipe.model_validate({
    "id": "sd3-tiny", "description": "tiny SD3", "kind": "embedded", "pipeline": "sd3-tiny",
    "flags": {"served-model-name": "sd3-tiny"}, "readiness": {"timeout_s": 600},
})  # fmt: skip


def row(offload: str = "resident") -> RowKey:
    return RowKey((("model", "sd3-tiny"), ("task", "t2i"), ("api_mode", "images-generations"),
                   ("offload", offload), ("output_transport", "b64-json")))  # fmt: skip


def params(**overrides: Any) -> OffloadSweepParams:
    return OffloadSweepParams.model_validate({**SPEC["params"], **overrides})


def noisy(images: list[bytes]) -> list[bytes]:
    rng = random.Random(3)
    out = []
    for data in images:
        image = Image.open(io.BytesIO(data)).convert("RGB")
        moved = bytes(min(255, max(0, v + rng.randint(-2, 2))) for v in image.tobytes())
        buffer = io.BytesIO()
        Image.frombytes("RGB", image.size, moved).save(buffer, format="PNG")
        out.append(buffer.getvalue())
    return out


def run(
    behaviours: dict[str, Behaviour], p: OffloadSweepParams | None = None,
    key: RowKey | None = None, *, logs: dict[str, str] | None = None, log_dir: Path | None = None,
) -> tuple[CheckOutcome, FakePoints, dict[str, dict[str, Any]]]:  # fmt: skip
    fake = FakePoints(behaviours, mutate=noisy, logs=logs or {}, log_dir=log_dir)
    ctx = CheckContext(
        gate=GateSpec(id="offload-sweep", kind="offload_sweep", version=1), row=key or row(),
        target=TargetInfo(url=None, recipe=BASE, label="sd3-tiny"), artifacts=MemorySink(),
        project_root=ROOT, make_client=lambda: (_ for _ in ()).throw(AssertionError("no server")),
        serve_point=fake.serve,
    )  # fmt: skip
    outcome = asyncio.run(OffloadSweepCheck().run(ctx, p or params(repetitions=3)))
    sweep = outcome.effective["sweep"]
    assert isinstance(sweep, dict)
    points = {str(p["name"]): p for p in sweep["points"]}  # type: ignore[index,union-attr]
    return outcome, fake, points


# Resident blocks make a layer point DLO (vLLM-Omni 0.30 refuses them for the tiny SD3, which
# declares no resident DiT paths; the fake serves them): each logs the loader path it took.
FELL_BACK = "INFO DLO direct checkpoint mmap unavailable; using ordinary loader: no plan\n"
DLO_LOGS = {"layer-nopin-r1": FELL_BACK, "layer-nopin-r2": FELL_BACK}


def test_full_sweep_on_the_resident_row_launches_every_point_one_at_a_time(tmp_path: Path) -> None:
    outcome, fake, points = run({"layerwise-default": "refuse"}, logs=DLO_LOGS, log_dir=tmp_path)
    assert [r.id for r in fake.launched] == [
        "sd3-tiny--resident", "sd3-tiny--layer-nopin-r0", "sd3-tiny--layer-nopin-r1",
        "sd3-tiny--layer-nopin-r2", "sd3-tiny--cpu-offload", "sd3-tiny--layerwise-default",
        "sd3-tiny--resident-again",  # after the DLO points served (DL-02)
    ]  # fmt: skip
    assert fake.max_live == 1
    config = fake.launched[2].flags["diffusion-offload-config"]
    assert config == ('{"components": ["dit"], "layer_options": {"dit": {"resident_layers": 1}},'
                      ' "mode": "layer", "pin_memory": false}')  # fmt: skip
    assert fake.launched[2].flags["served-model-name"] == "sd3-tiny"
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    r1 = points["layer-nopin-r1"]
    assert r1["verdict"] == "valid" and r1["repetitions"] == 3
    assert r1["parity"] == {"outcome": "passed", "max_abs_error": 0.0, "psnr_db": None,
                            "identical": True}  # fmt: skip
    assert r1["latency_min_s"] <= r1["latency_median_s"] <= r1["latency_max_s"]
    assert r1["peak_pss_bytes_load"] > 0 and r1["peak_pss_bytes_steady"] > 0
    # On CPU the frontier's memory figure is the higher of the two phases' PSS peaks.
    assert r1["memory_bytes"] == max(r1["peak_pss_bytes_load"], r1["peak_pss_bytes_steady"])


def test_refused_point_is_recorded_with_its_message_and_leaves_the_frontier(
    tmp_path: Path,
) -> None:
    outcome, _, points = run({"layerwise-default": "refuse"}, logs=DLO_LOGS, log_dir=tmp_path)
    refused = points["layerwise-default"]
    assert refused["refused"] is True and refused["verdict"] == "invalid"
    assert "pin_memory=True requires a CUDA" in refused["message"]
    sweep = outcome.effective["sweep"]
    assert isinstance(sweep, dict)
    assert "layerwise-default" not in sweep["frontier"]  # type: ignore[operator]
    assert outcome.outcome is GateOutcome.PASSED


def test_point_whose_output_differs_from_the_reference_fails() -> None:
    outcome, _, points = run({"layer-nopin-r1": "mutate", "layerwise-default": "refuse"})
    assert outcome.outcome is GateOutcome.FAILED
    (reason,) = outcome.reasons
    assert reason.startswith("point 'layer-nopin-r1': output differs from the reference")
    assert "pixels differ (max abs error 2) where exact equality is required" in reason
    bad = points["layer-nopin-r1"]
    assert bad["parity"]["outcome"] == "failed" and bad["parity"]["max_abs_error"] == 2.0
    sweep = outcome.effective["sweep"]
    assert isinstance(sweep, dict)
    assert "layer-nopin-r1" not in sweep["frontier"]  # type: ignore[operator]


def test_point_whose_memory_series_is_missing_is_invalid_not_passed() -> None:
    outcome, _, points = run({"cpu-offload": "no-pid", "layerwise-default": "refuse"})
    assert outcome.outcome is GateOutcome.INVALID
    assert points["cpu-offload"]["verdict"] == "invalid"
    assert points["cpu-offload"]["peak_pss_bytes_load"] is None
    assert any("point 'cpu-offload': memory series missing: no PSS reading in the load phase" in r
               for r in outcome.reasons), outcome.reasons  # fmt: skip


def test_too_few_repetitions_is_invalid() -> None:
    outcome, _, points = run({"layerwise-default": "refuse"}, params(repetitions=2))
    assert outcome.outcome is GateOutcome.INVALID
    assert points["resident"]["verdict_reasons"] == [
        "too few repetitions: 2 of 2 succeeded, 3 needed"
    ]
    assert "the reference point 'resident' could not be measured" in outcome.reasons[0]


def test_point_that_hangs_at_startup_is_bounded_and_recorded() -> None:
    behaviours: dict[str, Behaviour] = {
        "layer-nopin-r1": "refuse", "layer-nopin-r2": "hang", "layerwise-default": "refuse"}
    _, fake, points = run(behaviours, params(startup_deadline_s=0.3))
    hung = fake.launched[3]
    # The bound is the deadline handed to the launch (the fake waits it out, as the launcher
    # would), not how long this host took: no wall-clock figure is asserted.
    assert hung.readiness.timeout_s == 0.3, "the point's readiness is bounded by the deadline"
    record = points["layer-nopin-r2"]
    assert record["refused"] is True and record["verdict"] == "invalid"
    waited = fake.waited_s["layer-nopin-r2"]  # what the launcher reported, recorded as such
    assert record["message"].startswith(f"hung at startup: not ready within {waited:.0f} s")
    assert [r.id.split("--")[1] for r in fake.launched][-2:] == ["cpu-offload", "layerwise-default"]


def test_an_offload_row_runs_the_reference_and_its_own_point_and_fails_when_it_does_not_serve(
) -> None:  # fmt: skip
    outcome, fake, _ = run({"layer-nopin-r0": "refuse"}, key=row("layerwise-nopin"))
    assert [r.id for r in fake.launched] == ["sd3-tiny--resident", "sd3-tiny--layer-nopin-r0"]
    assert outcome.outcome is GateOutcome.FAILED
    assert outcome.reasons[0].startswith("the row's point 'layer-nopin-r0' did not serve")
    assert outcome.requested["row_point"] == "layer-nopin-r0"


def test_a_row_no_point_stands_for_is_invalid() -> None:
    outcome = asyncio.run(OffloadSweepCheck().run(CheckContext(
        gate=GateSpec(id="offload-sweep", kind="offload_sweep", version=1), row=row("fp8"),
        target=TargetInfo(url=None, recipe=BASE), artifacts=MemorySink(), project_root=ROOT,
        make_client=lambda: (_ for _ in ()).throw(AssertionError()),
        serve_point=FakePoints({}).serve), params()))  # fmt: skip
    assert outcome.outcome is GateOutcome.INVALID
    assert "no sweep point stands for row" in outcome.reasons[0]


def test_a_reference_that_refuses_to_start_makes_the_sweep_invalid_not_errored() -> None:
    outcome, fake, points = run({"resident": "refuse", "layerwise-default": "refuse"})
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert outcome.reasons[0].startswith(
        "the reference point 'resident' could not be measured: refused at startup")
    assert len(fake.launched) == 6  # every point was still launched and recorded
    assert points["layer-nopin-r0"]["parity"] is None  # nothing to hold it to


def test_cases_the_reference_failed_make_the_other_points_invalid() -> None:
    outcome, _, points = run({"resident": "fails-seed", "layerwise-default": "refuse"})
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    r0 = points["layer-nopin-r0"]
    assert r0["verdict"] == "invalid"
    assert any(r.startswith("not compared where the reference failed: images-generations/")
               and "-s987654 (HTTP 500)" in r for r in r0["verdict_reasons"]), r0  # fmt: skip
    assert any(r.startswith("point 'layer-nopin-r0': not compared where the reference failed")
               for r in outcome.reasons), outcome.reasons  # fmt: skip
    sweep = outcome.effective["sweep"]
    assert isinstance(sweep, dict)
    assert "layer-nopin-r0" not in sweep["frontier"]  # type: ignore[operator]
