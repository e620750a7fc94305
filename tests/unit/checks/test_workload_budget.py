"""The budget verdict: a projected workload past the budget is `host too slow`, naming what was
measured; one that fits, or no budget, says nothing."""

from omniqual.checks.workload_budget import budget_spent, projected_past_budget


def test_a_workload_that_fits_or_has_no_budget_is_not_too_slow() -> None:
    assert projected_past_budget(2.0, 10, 600, "the probe request") is None
    assert projected_past_budget(2.0, 10, 20, "the probe request") is None
    assert projected_past_budget(400.0, 10, None, "the probe request") is None


def test_a_projected_workload_past_the_budget_says_what_was_measured() -> None:
    assert projected_past_budget(40.26, 31, 600, "the probe request") == (
        "host too slow for this workload (measured: the probe request took 40.3 s; 31 such "
        "requests need about 1248 s, past the gate's budget of 600 s on this host)"
    )


def test_a_spent_budget_names_where_the_gate_got_to() -> None:
    assert budget_spent(600, "soak: near phase", 0.5) == (
        "host too slow for this workload: not done within the gate's budget of 600 s "
        "(last: soak: near phase, 50% done)"
    )
    assert budget_spent(600, "", None) == (
        "host too slow for this workload: not done within the gate's budget of 600 s"
    )
