"""One memory unit per sweep: NVML on a GPU sweep (the per-device peaks over both phases, summed),
PSS on CPU. A GPU sweep's point without NVML readings has no figure and is invalid; it is never
judged in PSS beside the NVML points."""

from omniqual.checks.offload_sweep.frontier_block import sweep_block
from omniqual.checks.offload_sweep.measure import PhaseMemory, PointMeasurement
from omniqual.checks.offload_sweep.params import OffloadSweepParams, Point
from omniqual.checks.offload_sweep.points import PointRecord
from omniqual.deploy.launcher import StartupOutcome
from omniqual.domain.recipe import Expectation

MIB = 1024 * 1024
GIB = 1024 * MIB
PARAMS = OffloadSweepParams.model_validate({
    "requests": {"prompts": ["a", "b", "c"], "seeds": [1, 2]}, "reference": "resident",
    "points": [{"name": "resident"}, {"name": "layer", "flags": {"enable-layerwise-offload": True}},
               {"name": "model", "flags": {"enable-cpu-offload": True}}],
    "tolerance": {"rationale": "lossless", "image": {"require_exact": True}},
})  # fmt: skip


def record(
    name: str, latencies: tuple[float, ...], pss_mib: int,
    load_gpu: dict[int, int] | None, steady_gpu: dict[int, int] | None,
) -> PointRecord:  # fmt: skip
    startup = StartupOutcome(
        recipe_id=name, expected=Expectation.SERVES, became_ready=True, reason="ready",
        exit_code=None, elapsed_s=15.0, log_path=None, log_tail=(), command=(),
        expected_error_matched=None,
    )  # fmt: skip
    load = PhaseMemory(pss_mib * MIB, pss_mib * MIB, load_gpu, 4)
    steady = PhaseMemory(pss_mib * MIB, pss_mib * MIB, steady_gpu, 4)
    measured = PointMeasurement({}, {}, latencies, (), load, steady)
    return PointRecord(Point(name, {}, {}), startup, measured, None, len(latencies), 3)


def test_a_gpu_sweep_never_judges_a_point_by_pss() -> None:
    # "model" saw no device (NVML found none for it): its 600 MiB PSS would make it the smallest
    # point by far beside figures in GiB of GPU memory.
    records = {
        "resident": record("resident", (1.0, 1.1, 1.2), 9000, {0: 40 * GIB}, {0: 41 * GIB}),
        "layer": record("layer", (2.0, 2.1, 2.2), 9500, {0: 20 * GIB}, {0: 18 * GIB}),
        "model": record("model", (3.0, 3.1, 3.2), 600, None, None),
    }
    block = sweep_block(records, PARAMS)
    assert block["memory_unit"] == "nvml"
    by_name = {p["name"]: p for p in block["points"]}
    assert by_name["resident"]["memory_bytes"] == 41 * GIB
    assert by_name["layer"]["memory_bytes"] == 20 * GIB  # the load peak: the higher phase
    assert by_name["model"]["memory_bytes"] is None and by_name["model"]["verdict"] == "invalid"
    assert any("no NVML reading in the load phase of a GPU sweep" in r
               for r in by_name["model"]["verdict_reasons"])  # fmt: skip
    assert block["frontier"] == ["layer", "resident"]
    assert "model" in block["excluded"]


def test_a_gpu_point_with_nvml_in_one_phase_only_has_no_figure() -> None:
    records = {
        "resident": record("resident", (1.0, 1.1, 1.2), 9000, {0: 40 * GIB}, {0: 41 * GIB}),
        "layer": record("layer", (2.0, 2.1, 2.2), 9500, None, {0: 18 * GIB}),
    }
    block = sweep_block(records, PARAMS)
    layer = next(p for p in block["points"] if p["name"] == "layer")
    assert layer["memory_bytes"] is None and layer["verdict"] == "invalid"


def test_a_cpu_sweep_judges_pss() -> None:
    records = {
        "resident": record("resident", (1.0, 1.1, 1.2), 700, None, None),
        "layer": record("layer", (2.0, 2.1, 2.2), 800, None, None),
    }
    block = sweep_block(records, PARAMS)
    assert block["memory_unit"] == "pss"
    assert [p["memory_bytes"] for p in block["points"]] == [700 * MIB, 800 * MIB]
    assert block["recommended"] == "resident"
