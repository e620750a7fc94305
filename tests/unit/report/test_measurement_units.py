"""Measurement tables show times in milliseconds, as vLLM-Omni's own benchmark reports do,
shifted exactly in decimal so no recorded digit is lost or invented; other units as recorded."""

from datetime import UTC, datetime

from omniqual.domain.evidence import Measurement
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.result import GateResult
from omniqual.report.evidence_blocks import in_report_unit, measurement_table


def test_seconds_are_shown_in_milliseconds_digit_for_digit() -> None:
    assert in_report_unit(0.0595123, "s") == ("59.5123", "ms")
    assert in_report_unit(0.1, "s") == ("100", "ms")  # never 100.00000000000001
    assert in_report_unit(3.2, "s") == ("3200", "ms")


def test_other_units_and_non_finite_figures_stay_as_recorded() -> None:
    assert in_report_unit(5, "count") == ("5.0", "count")
    assert in_report_unit(float("inf"), "s") == ("inf", "s")


def test_a_bound_in_seconds_is_shown_in_the_figure_unit() -> None:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    result = GateResult(result_id="r", run_id="run", gate_id="startup", gate_version=1,
                        gate_kind="startup", row="model=m", outcome=GateOutcome.PASSED,
                        target="t", started_at=at, finished_at=at,
                        measurements=(Measurement(name="time_to_ready", value=12.5, unit="s",
                                                  bound=60.0, ok=True),))  # fmt: skip
    table = measurement_table("Measurements", [result], {"model=m": "#1"})
    (row,) = table.rows
    assert row[3:7] == ("12500", "ms", "—", "60000")
