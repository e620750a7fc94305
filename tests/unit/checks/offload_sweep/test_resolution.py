"""The sweep block's resolution sentence: points whose latency ranges overlap and whose memory
lies within the declared resolution are said to be not apart; a real gap in either is not."""

from omniqual.checks.offload_sweep.frontier_block import resolution_note
from omniqual.checks.offload_sweep.measure import PhaseMemory, PointMeasurement
from omniqual.checks.offload_sweep.params import Point
from omniqual.checks.offload_sweep.points import PointRecord
from omniqual.deploy.launcher import StartupOutcome
from omniqual.domain.recipe import Expectation

MIB = 1024 * 1024


def record(name: str, latencies: tuple[float, ...], pss_mib: int) -> PointRecord:
    memory = PhaseMemory(pss_mib * MIB, pss_mib * MIB, None, 4)
    startup = StartupOutcome(
        recipe_id=name, expected=Expectation.SERVES, became_ready=True, reason="ready",
        exit_code=None, elapsed_s=15.0, log_path=None, log_tail=(), command=(),
        expected_error_matched=None,
    )  # fmt: skip
    measured = PointMeasurement({}, {}, latencies, (), memory, memory)
    return PointRecord(Point(name, {}, {}), startup, measured, None, len(latencies), 3)


def test_overlapping_ranges_and_close_memory_are_not_apart() -> None:
    records = {
        "resident": record("resident", (0.06, 0.07, 0.13), 705),
        "layer-nopin-r0": record("layer-nopin-r0", (0.065, 0.07, 0.08), 720),
    }
    note = resolution_note(records, 0.05)
    assert note == (
        "The 2 measured points are not apart: their latency ranges overlap and their memory"
        " figures lie within 2.1% of each other (resolution 5%), so which of them is on the"
        " frontier is run-to-run variation, not a measured trade-off."
    )


def test_a_memory_gap_beyond_the_resolution_is_a_difference() -> None:
    records = {
        "resident": record("resident", (0.06, 0.07, 0.13), 705),
        "offload": record("offload", (0.065, 0.07, 0.08), 400),
    }
    assert resolution_note(records, 0.05) is None


def test_latency_ranges_apart_are_a_difference() -> None:
    records = {
        "resident": record("resident", (0.06, 0.07, 0.08), 705),
        "offload": record("offload", (0.2, 0.21, 0.22), 706),
    }
    assert resolution_note(records, 0.05) is None
