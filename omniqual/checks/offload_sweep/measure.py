"""Measuring one served sweep point: warm-up (excluded), the request set for parity, fixed-work
repetitions for latency, and the server tree's memory per phase.

Phases: ``load`` is from readiness through the warm-up requests (an offload hook moves weights
on first use, so the first request still belongs to loading); ``steady`` is every request after
it. Each phase has its own observer series; a phase whose series holds no PSS reading leaves
that figure ``None`` (the point is then invalid, never passed).
"""

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from omniqual.checks.api_contract.exchange import Timeouts
from omniqual.checks.parity.requests import ParityCase, send_case
from omniqual.client import ClientError, OmniClient
from omniqual.deploy.observer import ObserverSample, ProcessObserver


@dataclass(frozen=True, slots=True)
class PhaseMemory:
    peak_pss_bytes: int | None
    peak_rss_bytes: int | None
    gpu_bytes_per_device: Mapping[int, int] | None
    """Peak NVML-attributed bytes per GPU index; None where NVML saw no device."""
    samples: int


@dataclass(frozen=True, slots=True)
class PointMeasurement:
    outputs: Mapping[str, tuple[bytes, ...]]
    """Media per case id (empty tuple: the case got no media)."""
    problems: Mapping[str, str]
    latencies_s: tuple[float, ...]
    latency_failures: tuple[str, ...]
    load: PhaseMemory
    steady: PhaseMemory
    series: tuple[ObserverSample, ...] = field(default=())

    @property
    def median_s(self) -> float | None:
        return statistics.median(self.latencies_s) if self.latencies_s else None


def phase_memory(samples: Sequence[ObserverSample]) -> PhaseMemory:
    pss = [s.pss_bytes for s in samples if s.pss_bytes is not None and s.processes]
    rss = [s.rss_bytes for s in samples if s.processes]
    gpus: dict[int, int] = {}
    for sample in samples:
        for gpu in sample.gpus:
            used = gpu.tree_used_bytes if gpu.tree_used_bytes is not None else gpu.used_bytes
            gpus[gpu.index] = max(gpus.get(gpu.index, 0), used)
    return PhaseMemory(max(pss) if pss else None, max(rss) if rss else None,
                       gpus if any(s.nvml for s in samples) else None, len(samples))  # fmt: skip


async def _answer(
    client: OmniClient, case: ParityCase, timeouts: Timeouts
) -> tuple[bytes, ...] | str:
    try:
        exchange = await send_case(client, case, timeouts)
    except ClientError as exc:
        return f"{type(exc).__name__}: {exc}"
    if not exchange.response.ok:
        return f"HTTP {exchange.response.status}"
    if exchange.problem is not None or not exchange.media:
        return exchange.problem or "no media in the answer"
    return tuple(exchange.media)


Observe = Callable[[int], ProcessObserver]


async def measure_point(
    make_client: Callable[[], OmniClient],
    pid: int | None,
    cases: Sequence[ParityCase],
    *,
    timeouts: Timeouts,
    warmup: int,
    repetitions: int,
    observe: Observe,
) -> PointMeasurement:
    """Warm up on the first case, answer every case, then time ``repetitions`` runs of the first
    case (the same request each time: fixed work)."""
    load_obs = observe(pid).start() if pid is not None else None
    outputs: dict[str, tuple[bytes, ...]] = {}
    problems: dict[str, str] = {}
    samples: list[float] = []
    failures: list[str] = []
    steady_obs: ProcessObserver | None = None
    try:
        async with make_client() as client:
            for _ in range(warmup):
                await _answer(client, cases[0], timeouts)
            load_series = load_obs.stop() if load_obs is not None else ()
            steady_obs = observe(pid).start() if pid is not None else None
            for case in cases:
                answer = await _answer(client, case, timeouts)
                if isinstance(answer, str):
                    problems[case.id], outputs[case.id] = answer, ()
                else:
                    outputs[case.id] = answer
            for _ in range(repetitions):
                started = time.perf_counter()
                answer = await _answer(client, cases[0], timeouts)
                if isinstance(answer, str):
                    failures.append(answer)
                else:
                    samples.append(time.perf_counter() - started)
    finally:
        if load_obs is not None:
            load_obs.stop()
        steady_series = steady_obs.stop() if steady_obs is not None else ()
    return PointMeasurement(outputs, problems, tuple(samples), tuple(failures),
                            phase_memory(load_series), phase_memory(steady_series),
                            tuple(load_series) + tuple(steady_series))  # fmt: skip
