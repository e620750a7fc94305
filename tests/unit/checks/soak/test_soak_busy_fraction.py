"""The near phase tells the server from the saturation estimate by how busy the server was: an
SLO miss in a phase run within the estimate's precision of it is the server's (`failed`) when
the server sat idle a measurable share of the phase (it ran below capacity, so its backlog was
not queueing from overload), and stays `invalid` only when the phase kept the server busy
throughout (capacity cannot be told from the estimate), whether completions kept up with the
offered rate or not. Every phase records its busy fraction. Virtual clock, constant arrivals:
no sockets, no real time."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from omniqual.checks.soak.judge import PhaseEvidence, judge_phase
from omniqual.checks.soak.params import SoakParams
from omniqual.checks.soak.phases import Calibration, run_load
from omniqual.domain.evidence import Measurement
from omniqual.loadgen.records import LoadRun, OutcomeStatus, SendOutcome
from omniqual.loadgen.workload import EndpointKind, PlannedRequest
from tests.unit.loadgen.conftest import _run_virtual  # the virtual-clock loop

CALIBRATION = Calibration(solo_s={"small": 1.0}, weights={"small": 1.0}, failures=())
"""Mean service 1 s: the near phase's 5x bound is 5 s."""
PRECISION = 0.3  # the saturation estimate's, as the short preset searches it


def _params() -> SoakParams:
    near = {"name": "near", "factor": 0.85, "requests": 40, "slo_percentile": 90,
            "slo_bound_x_service": 5, "end_when_sufficient": True}  # fmt: skip
    return SoakParams.model_validate({
        "shapes": [{"name": "small", "width": 64, "height": 64}],
        "arrival": "constant",
        "phases": [near],
        "injections": {"rate": 0.0},
        "validity": {"confidence": 0.95, "min_phase_requests": 30, "max_p99_issue_lag_s": 0.05},
    })  # fmt: skip


Judged = tuple[list[str], list[str], dict[str, Measurement]]


def _judged(latency: Callable[[int], float], rate: float) -> Judged:
    """The near phase at ``rate`` against a server answering request i after latency(i)."""
    params = _params()
    spec = params.phases[0]

    async def send(planned: PlannedRequest, /) -> SendOutcome:
        await asyncio.sleep(latency(planned.index))
        return SendOutcome(OutcomeStatus.OK, status_code=200)

    run: LoadRun = _run_virtual(run_load(
        send, params, EndpointKind.IMAGE, rate=rate, count=spec.requests, seed=7,
        injected=False, phase=spec, calibration=CALIBRATION,
    ))  # fmt: skip
    evidence = PhaseEvidence(spec, rate, run, (), 5.0 * CALIBRATION.mean_service_s, PRECISION)
    found, _ = judge_phase(evidence, params.validity)
    measured = {m.name: m for m in found.measurements}
    return found.failures, found.invalid, measured


def test_a_degraded_server_idle_between_slow_requests_fails_naming_its_busy_fraction() -> None:
    # One request in four takes 10 s (ten solo times), the last one among them; arrivals every
    # 4 s. The server sits idle ~1/3 of the phase, yet 10 of 40 answers are over the 5 s bound
    # and the slow tail keeps completions at 94 % of the offered rate.
    failures, invalid, measured = _judged(lambda i: 10.0 if i % 4 == 3 else 0.5, rate=0.25)
    busy = measured["near.busy_fraction"]
    assert busy.unit == "1" and 0.6 < busy.value < 0.7
    assert not invalid
    assert len(failures) == 1
    assert "missed at 95% confidence" in failures[0]
    assert f"busy {busy.value:.0%} of the phase" in failures[0]
    assert "ran below its capacity" in failures[0]


def test_a_saturated_phase_stays_invalid_naming_its_busy_fraction() -> None:
    # Every request outstanding until long after the next is sent: busy throughout, completions
    # at 73 % of the offered rate. Whether the server or the estimate is at fault cannot be told.
    failures, invalid, measured = _judged(lambda _i: 30.0, rate=0.5)
    assert measured["near.busy_fraction"].value == 1.0
    assert not failures
    assert len(invalid) == 1
    assert "known only to ±30%" in invalid[0]
    assert "busy 100% of the phase" in invalid[0]


def test_a_healthy_server_near_saturation_that_meets_its_slo_passes() -> None:
    # Busy 90 % of the phase, every answer in 1.8 s against the 5 s bound.
    failures, invalid, measured = _judged(lambda _i: 1.8, rate=0.5)
    assert (failures, invalid) == ([], [])
    busy = measured["near.busy_fraction"]
    assert busy.unit == "1" and 0.85 < busy.value <= 0.91
    in_flight = measured["near.mean_in_flight"]
    assert in_flight.unit == "count" and 0.85 < in_flight.value <= 0.91


def test_a_saturated_phase_that_kept_up_with_its_arrivals_stays_invalid() -> None:
    # Every answer in 5.5 s against the 5 s bound, arrivals every 4 s: a request outstanding
    # throughout, and completions keeping 97 % of the offered rate. Near a utilisation of 1 a
    # queue keeps up while its latency grows, so keeping up does not show the phase ran below
    # capacity (this was judged `failed`).
    failures, invalid, measured = _judged(lambda _i: 5.5, rate=0.25)
    assert measured["near.busy_fraction"].value == 1.0
    assert not failures
    assert len(invalid) == 1 and "known only to ±30%" in invalid[0]
    assert "completions kept 97%" in invalid[0] and "busy 100% of the phase" in invalid[0]
