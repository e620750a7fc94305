"""A gate's wall-clock budget on the host it runs on, and the verdict when it cannot fit.

A gate spec may state ``budget_s``. A check that can calibrate its workload (one request timed,
the rest counted) projects the whole before sending it and stops at once when it cannot fit;
the engine stops any gate still running when the budget is spent. Either way the outcome is
``invalid: host too slow for this workload (measured ...)``: a slow host says nothing about the
server, and an hour of waiting is no verdict."""

from omniqual.domain.evidence import Measurement

HOST_TOO_SLOW = "host too slow for this workload"


def projected_past_budget(
    unit_s: float, units: int, budget_s: float | None, what: str
) -> str | None:
    """The reason when ``units`` pieces of work, each measured at ``unit_s``, cannot fit
    ``budget_s``; None when they fit or there is no budget."""
    if budget_s is None:
        return None
    projected = unit_s * units
    if projected <= budget_s:
        return None
    return (
        f"{HOST_TOO_SLOW} (measured: {what} took {unit_s:.1f} s; {units} such requests need "
        f"about {projected:.0f} s, past the gate's budget of {budget_s:g} s on this host)"
    )


def budget_spent(budget_s: float, progress: str, fraction: float | None) -> str:
    done = f", {fraction:.0%} done" if fraction is not None else ""
    where = f" (last: {progress}{done})" if progress else ""
    return f"{HOST_TOO_SLOW}: not done within the gate's budget of {budget_s:g} s{where}"


def budget_measurement(budget_s: float) -> Measurement:
    return Measurement(name="gate_budget", value=budget_s, unit="s")
