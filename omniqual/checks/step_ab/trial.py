"""One repetition of the step-ab work on one arm, and the figure it yields (seconds, lower is
better). Both arms get exactly the same requests: every seed and arrival offset is a function
of the gate's seed and the repetition index, never of the arm. Times are on the event loop's
clock.

``cancel_frees_within_step``: per trial, a long request is sent and cut by the client (the
connection closed, which the server sees as an abort) ``cut_after_s`` later; a short request is
sent ``queue_after_s`` after the long one, so it waits behind it. The trial's sample is the short
request's completion measured from the cut. A long request answered before its cut is no trial
(an error: the long shape is too short for this host).

``short_request_p95``: a Poisson mix of short and long requests, open loop; the figure is the
p95 latency of the short ones from their scheduled arrival.
"""

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import numpy as np

from omniqual.checks.load_binding import BindingSettings, OmniSend, wire_call
from omniqual.checks.soak.params import ShapeSpec
from omniqual.checks.step_ab.params import StepAbParams
from omniqual.client import NO_JSON, ClientError, OmniClient
from omniqual.loadgen.issuer import IssuerSettings, issue
from omniqual.loadgen.records import RecordStatus
from omniqual.loadgen.schedule import poisson_schedule
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

SEEDS_PER_REPETITION = 1000


@dataclass(frozen=True, slots=True)
class TrialResult:
    """One repetition on one arm: its figure (None when nothing usable was measured), the
    samples behind it and what went wrong."""

    value: float | None
    samples: tuple[float, ...]
    errors: tuple[str, ...] = ()


Trial = Callable[[OmniClient, StepAbParams, EndpointKind, int], Awaitable[TrialResult]]
"""(client of one arm, params, endpoint, repetition index) -> its result."""


def _planned(shape: ShapeSpec, endpoint: EndpointKind, seed: int, index: int) -> PlannedRequest:
    params = RequestParams(width=shape.width, height=shape.height, num_frames=shape.num_frames,
                           steps=shape.steps, prompt_tokens=shape.prompt_tokens,
                           guidance_scale=shape.guidance_scale, seed=seed,
                           extra=tuple(sorted(shape.extra.items())))  # fmt: skip
    return PlannedRequest(index, 0.0, shape.name, "step-ab", endpoint, params)


async def cancel_trial(
    client: OmniClient, params: StepAbParams, endpoint: EndpointKind, index: int
) -> TrialResult:
    loop = asyncio.get_running_loop()
    samples: list[float] = []
    errors: list[str] = []
    for k in range(params.trials):
        seed = params.seed + index * SEEDS_PER_REPETITION + k
        long = wire_call(_planned(params.long, endpoint, seed, 2 * k))
        short = wire_call(_planned(params.short, endpoint, seed, 2 * k + 1))
        cut = asyncio.create_task(client.send_and_disconnect(
            long.method, long.path, after_s=params.cut_after_s,
            json=NO_JSON if long.json is None else long.json, data=long.data,
            files=list(long.files) or None))  # fmt: skip
        await asyncio.sleep(params.queue_after_s)
        waiting = asyncio.create_task(client.send_raw(
            short.method, short.path, json=NO_JSON if short.json is None else short.json,
            data=short.data, files=list(short.files) or None,
            timeout_s=params.request_timeout_s))  # fmt: skip
        try:
            outcome = await cut
            cut_at = loop.time()
            answer = await waiting
        except ClientError as exc:
            errors.append(f"trial {k}: {type(exc).__name__}: {exc}")
            continue
        if outcome.answered:
            errors.append(f"trial {k}: the long request was answered (HTTP {outcome.status}) "
                          f"before its cut at {params.cut_after_s:g} s (lengthen it)")  # fmt: skip
        elif not answer.ok:
            errors.append(f"trial {k}: the short request answered HTTP {answer.status}")
        else:
            samples.append(loop.time() - cut_at)
    value = float(np.mean(samples)) if samples and not errors else None
    return TrialResult(value, tuple(samples), tuple(errors))


async def mixed_trial(
    client: OmniClient, params: StepAbParams, endpoint: EndpointKind, index: int
) -> TrialResult:
    entries = tuple(
        MixEntry(name=s.name, task="step-ab", endpoint=endpoint, weight=weight,
                 seed_policy=SeedPolicy.PER_REQUEST,
                 shape=ShapeParams(width=s.width, height=s.height, num_frames=s.num_frames,
                                   steps=s.steps, prompt_tokens=s.prompt_tokens,
                                   guidance_scale=s.guidance_scale, extra=dict(s.extra)))
        for s, weight in ((params.short, 1 - params.long_fraction),
                          (params.long, params.long_fraction))
    )  # fmt: skip
    seed = params.seed + index * SEEDS_PER_REPETITION
    schedule = poisson_schedule(params.arrival_rps, seed=seed, count=params.requests)
    planned = plan_requests(WorkloadSpec(name="step-ab", seed=seed, entries=entries), schedule)
    settings = BindingSettings(request_timeout_s=params.request_timeout_s,
                               job_timeout_s=params.request_timeout_s)  # fmt: skip
    deadline = schedule.window_s + params.request_timeout_s * params.requests
    run = await issue(planned, schedule, OmniSend(client, settings),
                      IssuerSettings(in_flight_cap=None, deadline_s=deadline))  # fmt: skip
    failed = [r for r in run.records if r.status is not RecordStatus.OK]
    shorts = tuple(
        lat for r in run.records
        if r.entry == params.short.name and r.status is RecordStatus.OK
        and (lat := r.latency_from_schedule_s) is not None
    )  # fmt: skip
    errors = tuple(f"request {r.index} ({r.entry}): {r.error_kind or r.status.value}"
                   for r in failed)  # fmt: skip
    value = float(np.percentile(shorts, 95)) if shorts and not errors else None
    return TrialResult(value, shorts, errors)


def trial_for(params: StepAbParams) -> Trial:
    return cancel_trial if params.hypothesis == "cancel_frees_within_step" else mixed_trial
