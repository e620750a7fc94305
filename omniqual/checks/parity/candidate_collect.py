"""One side of a parity run: send every case to a deployment, keep what it returned, time a
fixed case after warm-up, and watch the server's process tree for its peak memory.

The same code serves both sides, so the reference and the candidate do the same work the same
way; only ``concurrent`` differs (a batching candidate gets its cases in flight together, so it
really batches, while the reference answers each alone)."""

import asyncio
import dataclasses
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from omniqual.checks.api_contract.exchange import Exchange, Timeouts
from omniqual.checks.parity.requests import ParityCase, send_case
from omniqual.client import ClientError, OmniClient
from omniqual.deploy.observer import ObserverSample, ProcessObserver


@dataclass(frozen=True, slots=True)
class CaseOutput:
    media: tuple[bytes, ...]
    status: int | None
    problem: str | None = None
    """Why there is no usable media (an error status, a failed job, a transport failure)."""
    started_s: float | None = None
    finished_s: float | None = None
    """When the request was sent and answered (``time.perf_counter``), for shared execution."""


@dataclass(frozen=True, slots=True)
class Latency:
    samples_s: tuple[float, ...]
    failures: tuple[str, ...] = ()

    @property
    def median_s(self) -> float | None:
        return statistics.median(self.samples_s) if self.samples_s else None

    @property
    def min_s(self) -> float | None:
        return min(self.samples_s) if self.samples_s else None

    @property
    def max_s(self) -> float | None:
        return max(self.samples_s) if self.samples_s else None


@dataclass(frozen=True, slots=True)
class Memory:
    peak_pss_bytes: int | None
    """None when no sample could read PSS (or no server pid is known)."""
    gpu_tree_peak_bytes: Mapping[int, int] = field(default_factory=dict)
    """Per GPU index, the peak NVML attributes to the server tree (empty without NVML)."""
    gpu_device_peak_bytes: Mapping[int, int] = field(default_factory=dict)
    nvml: bool = False
    samples: int = 0


@dataclass(frozen=True, slots=True)
class SideRun:
    outputs: Mapping[str, CaseOutput]
    latency: Latency
    memory: Memory
    groups: tuple[tuple[str, ...], ...] = ()
    """The case ids sent together, group by group."""
    repeat: Mapping[str, CaseOutput] = field(default_factory=dict)
    """Every case answered a second time on the same deployment (the reference's own spread);
    empty when not asked for."""


def _output(exchange: Exchange) -> CaseOutput:
    status = exchange.response.status
    if not exchange.response.ok:
        return CaseOutput((), status, f"HTTP {status}")
    if exchange.problem is not None or not exchange.media:
        return CaseOutput((), status, exchange.problem or "no media in the answer")
    return CaseOutput(tuple(exchange.media), status)


async def _one(client: OmniClient, case: ParityCase, timeouts: Timeouts) -> CaseOutput:
    started = time.perf_counter()
    try:
        output = _output(await send_case(client, case, timeouts))
    except ClientError as exc:
        output = CaseOutput((), None, f"{type(exc).__name__}: {exc}")
    return dataclasses.replace(output, started_s=started, finished_s=time.perf_counter())


async def _timed(client: OmniClient, case: ParityCase, timeouts: Timeouts) -> Latency:
    started = time.perf_counter()
    output = await _one(client, case, timeouts)
    elapsed = time.perf_counter() - started
    if output.problem is not None:
        return Latency((), (output.problem,))
    return Latency((elapsed,))


def memory_of(samples: Sequence[ObserverSample]) -> Memory:
    pss = [s.pss_bytes for s in samples if s.pss_bytes is not None and s.processes]
    tree: dict[int, int] = {}
    device: dict[int, int] = {}
    for sample in samples:
        for gpu in sample.gpus:
            device[gpu.index] = max(device.get(gpu.index, 0), gpu.used_bytes)
            if gpu.tree_used_bytes is not None:
                tree[gpu.index] = max(tree.get(gpu.index, 0), gpu.tree_used_bytes)
    return Memory(max(pss) if pss else None, tree, device,
                  any(s.nvml for s in samples), len(samples))  # fmt: skip


async def run_side(
    make_client: Callable[[], OmniClient],
    pid: int | None,
    cases: Sequence[ParityCase],
    *,
    timeouts: Timeouts,
    concurrent: int,
    warmup: int,
    repetitions: int,
    observer_interval_s: float,
    repeat: bool = False,
    again: Callable[[], OmniClient] | None = None,
) -> SideRun:
    """Warm up, answer every case (``concurrent`` at a time), then time ``repetitions`` solo
    runs of the first case: the same request each time, so the work is fixed. With ``repeat``,
    answer every case once more, one at a time, on ``again`` (another launch of the same
    deployment) or else on this one: how far the deployment differs from itself."""
    observer = ProcessObserver(pid, interval_s=observer_interval_s) if pid is not None else None
    if observer is not None:
        observer.start()
    try:
        async with make_client() as client:
            for _ in range(warmup):
                await _one(client, cases[0], timeouts)
            outputs: dict[str, CaseOutput] = {}
            groups: list[tuple[str, ...]] = []
            for start in range(0, len(cases), concurrent):
                group = cases[start : start + concurrent]
                groups.append(tuple(c.id for c in group))
                answers = await asyncio.gather(*(_one(client, c, timeouts) for c in group))
                outputs.update({c.id: a for c, a in zip(group, answers, strict=True)})
            second: dict[str, CaseOutput] = {}
            if repeat and again is not None:
                async with again() as other:
                    second = {c.id: await _one(other, c, timeouts) for c in cases}
            elif repeat:
                second = {c.id: await _one(client, c, timeouts) for c in cases}
            samples: list[float] = []
            failures: list[str] = []
            for _ in range(repetitions):
                timed = await _timed(client, cases[0], timeouts)
                samples += timed.samples_s
                failures += timed.failures
    finally:
        series = observer.stop() if observer is not None else ()
    latency = Latency(tuple(samples), tuple(failures))
    return SideRun(outputs, latency, memory_of(series), tuple(groups), second)
