"""Driving the soak: warmup and solo calibration per shape, the saturation search, and open-loop
phases whose mix carries a small share of injected disconnects / job cancellations."""

import asyncio
import math
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from omniqual.checks.load_binding import EntryBinding, Injection, OmniSend
from omniqual.checks.soak.params import PhaseSpec, ShapeSpec, SoakParams, Validity
from omniqual.checks.workload_budget import HOST_TOO_SLOW
from omniqual.loadgen.issuer import IssuerSettings, Send, issue
from omniqual.loadgen.records import LoadRun, OutcomeStatus, SendOutcome
from omniqual.loadgen.saturation import (
    SaturationResult,
    SearchSettings,
    SloTarget,
    find_saturation,
)
from omniqual.loadgen.schedule import Schedule, constant_schedule, gamma_schedule, poisson_schedule
from omniqual.loadgen.sufficiency import required_samples
from omniqual.loadgen.workload import (
    EndpointKind,
    MixEntry,
    PlannedRequest,
    RequestParams,
    SeedPolicy,
    ShapeParams,
    WorkloadSpec,
    plan_requests,
)

INJECTED_SUFFIX = ":cut"


@dataclass(frozen=True, slots=True)
class Calibration:
    """Solo (one at a time) latency per shape, after warmup."""

    solo_s: Mapping[str, float]
    weights: Mapping[str, float]
    failures: tuple[str, ...]
    too_slow: str | None = None
    """Why the soak's workload cannot fit its budget on this host (calibration stopped)."""

    @property
    def mean_service_s(self) -> float:
        """Mix-weighted mean solo latency: the service time one request costs on average."""
        total = sum(self.weights.values())
        return sum(self.solo_s[n] * w for n, w in self.weights.items() if n in self.solo_s) / total


def solo_request(shape: ShapeSpec, endpoint: EndpointKind, index: int, seed: int) -> PlannedRequest:
    params = RequestParams(
        shape.width, shape.height, shape.num_frames, shape.steps, shape.prompt_tokens,
        shape.guidance_scale, seed, tuple(sorted(shape.extra.items())),
    )  # fmt: skip
    return PlannedRequest(index, 0.0, shape.name, "solo", endpoint, params)


async def timed(send: OmniSend, planned: PlannedRequest) -> tuple[SendOutcome, float]:
    started = time.perf_counter()
    outcome = await send(planned)
    return outcome, time.perf_counter() - started


def least_soak_requests(params: SoakParams) -> float:
    """The soak's least workload in solo service times, served one at a time: bracketing the
    saturation rate takes two probes, and each phase its minimum sample count at its fraction
    of that rate (a phase at half the saturation rate takes twice its requests' service)."""
    probes = min(2, params.saturation.max_probes) * params.saturation.probe_requests
    phases = sum(
        min(p.requests, params.validity.min_phase_requests) / min(p.factor, 1.0)
        for p in params.phases
    )
    return probes + phases


def soak_past_budget(
    params: SoakParams, fastest_solo_s: float, budget_s: float | None, concurrency: int
) -> str | None:
    """The reason when the soak cannot fit ``budget_s`` even if every request were served as
    fast as the fastest shape was alone, ``concurrency`` at a time; None when it may fit."""
    if params.saturation.assume_rps is not None:
        return None  # phases at a given rate: their schedule, not the service time, sets it
    units = math.ceil(least_soak_requests(params))
    projected = fastest_solo_s * units / concurrency
    if budget_s is None or projected <= budget_s:
        return None
    together = f", {concurrency} served at once" if concurrency > 1 else ""
    return (
        f"{HOST_TOO_SLOW} (measured: the fastest shape's solo request took "
        f"{fastest_solo_s:.1f} s; the soak's least sample-sufficient workload, {units} such "
        f"request times{together}, needs about {projected:.0f} s, past the gate's budget of "
        f"{budget_s:g} s on this host)"
    )


async def calibrate(
    send: OmniSend,
    params: SoakParams,
    endpoint: EndpointKind,
    budget_s: float | None = None,
    concurrency: int = 1,
) -> Calibration:
    """Solo latency per shape; stops after a shape whose latency already shows the workload
    cannot fit ``budget_s`` (the rest of the calibration would only spend it)."""
    solo: dict[str, float] = {}
    failures: list[str] = []
    for shape in params.shapes:
        seen: list[float] = []
        total = params.warmup_per_shape + params.calibration_repeats
        for i in range(total):
            outcome, latency = await timed(send, solo_request(shape, endpoint, i, 1000 + i))
            if outcome.status is not OutcomeStatus.OK:
                failures.append(
                    f"calibration request {i + 1} of shape {shape.name!r} on {endpoint.value} "
                    f"failed: {outcome.error_kind or outcome.status.value} "
                    f"(HTTP {outcome.status_code})"
                )
                break
            if i >= params.warmup_per_shape:
                seen.append(latency)
        if seen:
            solo[shape.name] = statistics.median(seen)
            too_slow = soak_past_budget(params, min(solo.values()), budget_s, concurrency)
            if too_slow is not None and not failures:
                weights = {s.name: s.weight for s in params.shapes}
                return Calibration(solo, weights, (), too_slow)
    return Calibration(solo, {s.name: s.weight for s in params.shapes}, tuple(failures))


def workload(
    params: SoakParams, endpoint: EndpointKind, seed: int, *, injected: bool
) -> WorkloadSpec:
    rate = params.injections.rate if injected else 0.0
    entries: list[MixEntry] = []
    for shape in params.shapes:
        shape_params = ShapeParams(
            width=shape.width, height=shape.height, num_frames=shape.num_frames,
            steps=shape.steps, prompt_tokens=shape.prompt_tokens,
            guidance_scale=shape.guidance_scale, extra=dict(shape.extra),
        )  # fmt: skip
        task = "soak"
        entries.append(MixEntry(name=shape.name, task=task, endpoint=endpoint, shape=shape_params,
                                weight=shape.weight * (1 - rate)))  # fmt: skip
        if rate > 0:
            entries.append(MixEntry(
                name=shape.name + INJECTED_SUFFIX, task=task, endpoint=endpoint,
                shape=shape_params, weight=shape.weight * rate, seed_policy=SeedPolicy.PER_REQUEST,
            ))  # fmt: skip
    return WorkloadSpec(name="soak-mix", seed=seed, entries=tuple(entries))


def injection_bindings(
    params: SoakParams, endpoint: EndpointKind, calibration: Calibration
) -> dict[str, EntryBinding]:
    kind = Injection.CANCEL if endpoint is EndpointKind.VIDEO_ASYNC else Injection.DISCONNECT
    cut = params.injections.cut_fraction
    return {
        name + INJECTED_SUFFIX: EntryBinding(kind, cut * solo, recheck_after_s=1.5 * solo + 0.05)
        for name, solo in calibration.solo_s.items()
    }


def schedule_for(params: SoakParams, rate: float, count: int, seed: int,
                 max_duration_s: float | None) -> Schedule:  # fmt: skip
    if params.arrival == "constant":
        return constant_schedule(rate, duration_s=max_duration_s, count=count)
    if params.arrival == "gamma":
        assert params.cv is not None
        return gamma_schedule(rate, cv=params.cv, seed=seed, duration_s=max_duration_s,
                              count=count)  # fmt: skip
    return poisson_schedule(rate, seed=seed, duration_s=max_duration_s, count=count)


class PhaseSufficiency:
    """When a phase may end before its planned requests: every percentile it claims is
    certifiable at the policy's confidence even if every request still in flight turns out over
    the bound (or failed), at least ``min_phase_requests`` measured requests have completed and
    ``min_duration_s`` has passed. The SLO percentile counts the overs seen so far (latency from
    schedule, as the judge measures it; errors and timeouts count as overs); a claimed
    percentile without a bound needs its plain sample count. Injected requests are not samples.
    The judge afterwards sees the whole run, exactly as for a phase that ran out."""

    def __init__(self, spec: PhaseSpec, validity: Validity, bound_s: float | None,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        self.spec, self.validity, self.bound_s, self.clock = spec, validity, bound_s, clock
        self.started = clock()
        self.t0 = self.started
        """The schedule's zero on ``clock`` (set by the caller just before issuing)."""
        self.samples = 0  # completed measured requests that answered OK
        self.overs = 0  # of those over the SLO bound, plus measured failures
        self.completed = 0  # measured requests with any terminal outcome
        self.in_flight = 0  # measured requests sent and not yet answered

    def sent(self, planned: PlannedRequest) -> None:
        if not is_injected(planned.entry):
            self.in_flight += 1

    def answered(self, planned: PlannedRequest, outcome: SendOutcome, latency_s: float) -> None:
        if is_injected(planned.entry):
            return
        self.in_flight -= 1
        self.completed += 1
        if outcome.status is OutcomeStatus.OK:
            self.samples += 1
            if self.bound_s is not None and latency_s > self.bound_s:
                self.overs += 1
        elif outcome.status in (OutcomeStatus.ERROR, OutcomeStatus.TIMEOUT):
            self.overs += 1

    def sufficient(self) -> bool:
        spec, validity = self.spec, self.validity
        if self.completed < validity.min_phase_requests:
            return False
        if self.clock() - self.started < spec.min_duration_s:
            return False
        pending = self.in_flight
        for percentile in spec.claimed_percentiles:
            slo = percentile == spec.slo_percentile and self.bound_s is not None
            overs = (self.overs if slo else 0) + pending
            need = required_samples(percentile, confidence=validity.confidence, overlatency=overs)
            # In-flight requests count as samples only in the worst case they are overs.
            if self.samples + pending < need or self.samples < required_samples(
                percentile, confidence=validity.confidence
            ):
                return False
        return True

    def watching(self, send: Send) -> Send:
        """``send`` that keeps this tally (cancellation-safe: a cancelled send leaves none)."""

        async def watched(planned: PlannedRequest, /) -> SendOutcome:
            self.sent(planned)
            try:
                outcome = await send(planned)
            except BaseException:
                if not is_injected(planned.entry):
                    self.in_flight -= 1
                raise
            self.answered(planned, outcome, self.clock() - (self.t0 + planned.offset_s))
            return outcome

        return watched


async def run_load(
    send: Send, params: SoakParams, endpoint: EndpointKind, *, rate: float, count: int,
    seed: int, injected: bool, max_duration_s: float | None = None,
    phase: PhaseSpec | None = None, calibration: Calibration | None = None,
) -> LoadRun:  # fmt: skip
    """One open-loop run of ``count`` requests. A ``phase`` that asks to end when sufficient
    (with the ``calibration`` its SLO bound scales from) may end before ``count``: the run then
    covers the issued prefix of its schedule."""
    schedule = schedule_for(params, rate, count, seed, max_duration_s)
    plan = plan_requests(workload(params, endpoint, seed, injected=injected), schedule)
    deadline = schedule.window_s + params.drain_grace_s
    sufficiency = None
    if phase is not None and calibration is not None and phase.end_when_sufficient:
        bound = phase_bound_s(phase, calibration)
        clock = asyncio.get_running_loop().time  # the issuer's clock
        sufficiency = PhaseSufficiency(phase, params.validity, bound, clock)
    if sufficiency is None:
        return await issue(plan, schedule, send, IssuerSettings(deadline_s=deadline))
    settings = IssuerSettings(deadline_s=deadline, stop_when=sufficiency.sufficient)
    # The issuer's zero is a hair later than this: latencies counted here are never shorter.
    sufficiency.t0 = sufficiency.clock() + settings.start_delay_s
    return await issue(plan, schedule, sufficiency.watching(send), settings)


async def search_saturation(
    send: OmniSend, params: SoakParams, endpoint: EndpointKind, calibration: Calibration,
    seed: int,
) -> SaturationResult:  # fmt: skip
    spec = params.saturation
    service = calibration.mean_service_s
    slo = SloTarget(percentile=spec.slo_percentile, bound_s=spec.slo_bound_x_service * service)
    start = min(max(0.5 / service, spec.min_rps), spec.max_rps)
    settings = SearchSettings(
        start_rate=start, min_rate=spec.min_rps, max_rate=spec.max_rps, growth=2.0,
        precision=spec.precision, max_probes=spec.max_probes,
        min_issue_fidelity=params.validity.min_issue_fidelity,
    )  # fmt: skip
    probes = 0

    async def probe(rate: float) -> LoadRun:
        nonlocal probes
        probes += 1
        return await run_load(send, params, endpoint, rate=rate, count=spec.probe_requests,
                              seed=seed + 100 + probes, injected=False)  # fmt: skip

    return await find_saturation(probe, slo, settings)


def phase_bound_s(phase: PhaseSpec, calibration: Calibration) -> float | None:
    if phase.slo_percentile is None:
        return None
    if phase.slo_bound_s is not None:
        return phase.slo_bound_s
    assert phase.slo_bound_x_service is not None
    return phase.slo_bound_x_service * calibration.mean_service_s


def is_injected(entry: str) -> bool:
    return entry.endswith(INJECTED_SUFFIX)


def plain_entries(shapes: Sequence[ShapeSpec]) -> tuple[str, ...]:
    return tuple(s.name for s in shapes)
