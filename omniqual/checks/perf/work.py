"""One repetition of the perf gate's fixed work, and its metrics.

The plan is built once from the params (shapes assigned to slots and a seed drawn per slot from
the gate's seed), so every repetition sends the same requests. Closed loop (``concurrency``
in flight, the next sent as one returns): latency is timed from the send. Open loop
(``arrival_rps``): latency is timed from the scheduled arrival (no coordinated omission). All
times are on the event loop's clock. Metric names and units are those of vLLM-Omni's diffusion
benchmark (seconds, ``throughput_qps``, ``stage_durations_mean`` ...), with bench's one
difference: a percentile its sample count cannot support (the sample-sufficiency rule of
:mod:`omniqual.loadgen.sufficiency`, at its 99 % confidence) is written
``"insufficient (n < N)"``, never a number (:func:`claimed`).
"""

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from omniqual.checks.load_binding import BindingSettings, OmniSend
from omniqual.checks.perf.params import PerfParams
from omniqual.checks.soak.series import STAGE_PREFIX
from omniqual.client import OmniClient
from omniqual.loadgen.issuer import IssuerSettings, issue
from omniqual.loadgen.records import LoadRun, RecordStatus
from omniqual.loadgen.schedule import Schedule, constant_schedule
from omniqual.loadgen.sufficiency import DEFAULT_CONFIDENCE, required_samples
from omniqual.loadgen.workload import (
    EndpointKind,
    MixEntry,
    PlannedRequest,
    SeedPolicy,
    ShapeParams,
    WorkloadSpec,
    plan_requests,
)

CLOSED_LOOP_RATE = 1e6
"""Slots of a closed-loop repetition are all due at once; the in-flight cap paces them."""
PERCENTILE_FIELDS = {"latency_median": 50.0, "latency_p50": 50.0, "latency_p95": 95.0,
                     "latency_p99": 99.0}  # fmt: skip


def claimed(latencies: tuple[float, ...] | list[float], percentile: float) -> float | str | None:
    """The percentile as a claim: the number when the samples support it, else
    ``"insufficient (n < N)"`` (as bench writes it); None without samples."""
    if not latencies:
        return None
    needed = required_samples(percentile, confidence=DEFAULT_CONFIDENCE)
    if len(latencies) < needed:
        return f"insufficient (n < {needed})"
    return float(np.percentile(np.array(latencies), percentile))


@dataclass(frozen=True, slots=True)
class Repetition:
    """One measured pass over the work."""

    index: int
    warmup: bool
    duration: float
    completed_requests: int
    failed_requests: int
    latencies: tuple[float, ...]
    stage_durations_mean: dict[str, float] = field(default_factory=dict)
    peak_memory_mb_max: float | None = None
    errors: tuple[str, ...] = ()
    launch: int = 1
    """The server launch it ran on (1 for a deployment given by URL)."""

    @property
    def throughput_qps(self) -> float:
        return self.completed_requests / self.duration if self.duration > 0 else 0.0

    def metric(self, name: str) -> float | None:
        """A per-repetition metric by its vLLM-Omni name (None: no successful request)."""
        if name == "throughput_qps":
            return self.throughput_qps
        if name == "duration":
            return self.duration
        if not self.latencies:
            return None
        data = np.array(self.latencies)
        if name == "latency_mean":
            return float(data.mean())
        percentile = {"latency_median": 50, "latency_p50": 50, "latency_p95": 95,
                      "latency_p99": 99}.get(name)  # fmt: skip
        if percentile is None:
            raise KeyError(f"unknown perf metric {name!r}")
        return float(np.percentile(data, percentile))

    def fields(self) -> dict[str, object]:
        """The repetition in vLLM-Omni's result field names."""
        return {"repetition": self.index, "launch": self.launch, "warmup": self.warmup,
                "duration": self.duration, "completed_requests": self.completed_requests,
                "failed_requests": self.failed_requests, "throughput_qps": self.throughput_qps,
                "latency_mean": self.metric("latency_mean"),
                **{n: claimed(self.latencies, p) for n, p in PERCENTILE_FIELDS.items()},
                "peak_memory_mb_max": self.peak_memory_mb_max,
                "stage_durations_mean": dict(self.stage_durations_mean),
                "errors": list(self.errors)}  # fmt: skip


def plan(params: PerfParams, endpoint: EndpointKind) -> tuple[Schedule, tuple[PlannedRequest, ...]]:
    entries = tuple(
        MixEntry(name=s.name, task="perf", endpoint=endpoint, weight=s.weight,
                 seed_policy=SeedPolicy.PER_REQUEST,
                 shape=ShapeParams(width=s.width, height=s.height, num_frames=s.num_frames,
                                   steps=s.steps, prompt_tokens=s.prompt_tokens,
                                   guidance_scale=s.guidance_scale, extra=dict(s.extra)))
        for s in params.shapes
    )  # fmt: skip
    rate = params.arrival_rps or CLOSED_LOOP_RATE
    schedule = constant_schedule(rate, count=params.requests)
    spec = WorkloadSpec(name="perf", seed=params.seed, entries=entries)
    return schedule, plan_requests(spec, schedule)


async def run_repetition(
    client: OmniClient, params: PerfParams, endpoint: EndpointKind, index: int, warmup: bool,
    launch: int = 1,
) -> tuple[Repetition, LoadRun]:
    schedule, planned = plan(params, endpoint)
    settings = BindingSettings(request_timeout_s=params.request_timeout_s,
                               job_timeout_s=params.request_timeout_s)  # fmt: skip
    send = OmniSend(client, settings)
    cap = None if params.arrival_rps else params.concurrency
    deadline = schedule.window_s + params.request_timeout_s * params.requests
    run = await issue(planned, schedule, send,
                      IssuerSettings(in_flight_cap=cap, deadline_s=deadline))  # fmt: skip
    rep = summarize(run, index, warmup, open_loop=params.arrival_rps is not None, launch=launch)
    return rep, run


def summarize(run: LoadRun, index: int, warmup: bool, *, open_loop: bool,
              launch: int = 1) -> Repetition:  # fmt: skip
    ok = [r for r in run.records if r.status is RecordStatus.OK]
    latencies = tuple(
        lat for r in ok
        if (lat := r.latency_from_schedule_s if open_loop else r.latency_from_send_s) is not None
    )  # fmt: skip
    sent = [r.sent_s for r in run.records if r.sent_s is not None]
    ended = [r.ended_s for r in run.records if r.ended_s is not None]
    duration = max(ended) - min(sent) if sent and ended else 0.0
    stages: dict[str, list[float]] = {}
    for record in ok:
        for name, seconds in record.server_timings_s:
            if name.startswith(STAGE_PREFIX):
                stages.setdefault(name[len(STAGE_PREFIX):], []).append(seconds)
    peaks = [r.peak_memory_mb for r in ok if r.peak_memory_mb is not None and r.peak_memory_mb > 0]
    errors = _errors(r.error_kind or r.status.value for r in run.records if r not in ok)
    return Repetition(
        index=index, warmup=warmup, duration=duration, completed_requests=len(ok),
        failed_requests=len(run.records) - len(ok), latencies=latencies,
        stage_durations_mean={k: float(np.mean(v)) for k, v in sorted(stages.items())},
        peak_memory_mb_max=max(peaks) if peaks else None, errors=errors, launch=launch,
    )  # fmt: skip


def _errors(kinds: Iterable[str]) -> tuple[str, ...]:
    counted: dict[str, int] = {}
    for kind in kinds:
        counted[kind] = counted.get(kind, 0) + 1
    return tuple(f"{kind} x{n}" for kind, n in sorted(counted.items()))
