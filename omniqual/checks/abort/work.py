"""Whether cut work kept running, measured on the server (``bounds`` judges it by the row's abort
boundary).

Two independent signals, each used when present:

- the server's own ``/metrics``: ``vllm_omni:num_requests_running`` plus
  ``vllm_omni:num_requests_waiting`` (busy while either is above zero; vLLM-Omni 0.30 shows a
  diffusion request in flight as *waiting* on CPU, so the sum is what counts), the
  ``vllm_omni:diffusion_exec_s`` count (one per finished execution: a cut request that is counted
  ran to its end) and ``vllm_omni:num_inference_steps_sum``;
- the server process tree's CPU seconds over a window after the cut, less an idle baseline taken
  with the same ``/metrics`` polling, converted to seconds of service with the CPU rate of a solo
  request. Each process's user + system time counts in whole clock ticks, so a reading of the
  tree resolves no better than a tick per process (``WorkBaseline.resolution_s``).

The abort boundary follows the execution mode (production-validation, "Abort and cleanup"):
step execution must stop a cut request at the next step boundary; serial and request-batched
execution cannot preempt a request in denoise, so work that runs on is a stated limitation of
the row. A queued request, in any mode, must never run after its cancel.
"""

import asyncio
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from omniqual.client import ClientError, OmniClient
from omniqual.deploy.observer import TreeReader

RUNNING = "vllm_omni:num_requests_running"
WAITING = "vllm_omni:num_requests_waiting"
EXEC_COUNT = "vllm_omni:diffusion_exec_s_count"
STEPS_SUM = "vllm_omni:num_inference_steps_sum"
_WANTED = (RUNNING, WAITING, EXEC_COUNT, STEPS_SUM)


def clock_tick_s() -> float:
    """One tick of CPU-time accounting: ``/proc`` counts user and system time in USER_HZ ticks
    (``SC_CLK_TCK``, 100 a second on Linux whatever the kernel's HZ; an agent's host is Linux
    too, so the tick read here is its tick as well)."""
    try:
        ticks = os.sysconf("SC_CLK_TCK")
    except (ValueError, OSError):  # not a POSIX host: Linux's USER_HZ
        ticks = 100
    return 1.0 / ticks if ticks > 0 else 0.01


class Boundary(StrEnum):
    STEP = "step"  # a cut stops at the next denoise step
    REQUEST = "request"  # the whole request (or batch) is the unit: no in-denoise preemption


def boundary_of(execution: str | None) -> Boundary:
    """``step/N`` rows abort between steps; every other mode (serial, request batching, or no
    execution axis) has the whole request as its abort boundary."""
    return Boundary.STEP if execution is not None and execution.startswith("step") else (
        Boundary.REQUEST)  # fmt: skip


def parse_work_metrics(text: str) -> dict[str, float]:
    """The wanted families from Prometheus text, summed over their label sets (absent: left
    out, never zero)."""
    found: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name not in _WANTED:
            continue
        try:
            value = float(line.rsplit(" ", 1)[1])
        except (ValueError, IndexError):
            continue
        found[name] = found.get(name, 0.0) + value
    return found


@dataclass(frozen=True, slots=True)
class WorkReading:
    at: float
    cpu_s: float | None
    busy: float | None  # running + waiting
    executions: float | None
    steps: float | None


@dataclass(frozen=True, slots=True)
class WorkWindow:
    """What the server did over one window (deltas; None where a signal was absent)."""

    seconds: float
    cpu_s: float | None
    busy_s: float | None  # from the window start until busy was last seen above zero
    executions: float | None
    steps: float | None


@dataclass(frozen=True, slots=True)
class DenoiseSplit:
    """A request's time as ``fixed_s + steps * step_s``: fitted by least squares over solo runs
    timed at different step counts."""

    step_s: float
    fixed_s: float

    @classmethod
    def fit(cls, timed: Sequence[tuple[int, float]]) -> "DenoiseSplit | None":
        """None unless at least two step counts were timed and more steps took longer. The
        fixed part is kept within [0, the shortest run]: a negative intercept is noise."""
        counts = {steps for steps, _ in timed}
        if len(counts) < 2:
            return None
        mean_n = statistics.fmean(n for n, _ in timed)
        mean_t = statistics.fmean(t for _, t in timed)
        var = sum((n - mean_n) ** 2 for n, _ in timed)
        slope = sum((n - mean_n) * (t - mean_t) for n, t in timed) / var
        if slope <= 0:
            return None
        shortest = min(t for _, t in timed)
        return cls(slope, min(max(0.0, mean_t - slope * mean_n), shortest))


@dataclass(frozen=True, slots=True)
class WorkBaseline:
    idle_cpu_rate: float | None  # CPU s per s while idle, with the same /metrics polling
    busy_cpu_rate: float | None  # CPU s per s while serving one request alone
    solo_s: float
    steps: int | None
    idle_rate_spread: float | None = None
    """Max - min of the idle CPU rate over the idle repeats (CPU s per s; None: no CPU time)."""
    solo_spread_s: float | None = None
    """Max - min of the calibration's timed solo runs (None: fewer than two were timed)."""
    processes: int | None = None
    """Processes in the server's tree when the baseline was taken (None: not counted)."""
    clock_tick_s: float | None = None
    """One tick of CPU-time accounting (None: no CPU time, so no resolution to speak of)."""
    idle_s: float | None = None
    """The idle time the idle rate was taken over, from one reading to another."""
    idle_part_s: float | None = None
    """The shortest of the idle parts whose rates spread by ``idle_rate_spread``."""
    split: DenoiseSplit | None = None
    """The solo run's time per denoise step and besides its steps, fitted over the calibration's
    step counts (None: fewer than two counts timed, so every second counts as steps)."""

    @property
    def step_s(self) -> float | None:
        if self.split is not None:
            return self.split.step_s
        return self.solo_s / self.steps if self.steps else None

    @property
    def outside_loop_s(self) -> float:
        """A request's work that is no denoise step (set-up, prompt encoding, decoding,
        tear-down), which no step boundary can cut short."""
        return self.split.fixed_s if self.split is not None else 0.0

    @property
    def cpu_resolution_s(self) -> float | None:
        """CPU seconds one reading of the tree can be off by: a clock tick per process (each
        process's user + system time counts in whole ticks). None: not known."""
        if self.clock_tick_s is None or self.processes is None:
            return None
        return self.clock_tick_s * self.processes

    @property
    def cpu_usable(self) -> bool:
        """Whether CPU time can tell serving from idling: a solo request must burn more CPU per
        second than the idle server does, or the estimate is dropped."""
        idle, busy = self.idle_cpu_rate, self.busy_cpu_rate
        return idle is not None and busy is not None and busy > idle

    def _service_s(self, cpu_s: float) -> float:
        """Seconds of service ``cpu_s`` CPU seconds above the idle rate stand for."""
        assert self.idle_cpu_rate is not None and self.busy_cpu_rate is not None
        return cpu_s / (self.busy_cpu_rate - self.idle_cpu_rate)

    def resolution_s(self, window_s: float) -> float:
        """Seconds of service CPU-time accounting cannot resolve over ``window_s``: the
        window's own reading (one resolution) and the idle rate it is held against (one
        resolution over ``idle_s``, carried over the window). The floor of the noise."""
        res = self.cpu_resolution_s
        if not self.cpu_usable or res is None:
            return 0.0
        carried = window_s / self.idle_s if self.idle_s else 0.0
        return self._service_s(res * (1.0 + carried))

    def idle_variation_s(self, window_s: float) -> float:
        """Seconds of service the idle rate's own variation can fake over ``window_s``: the
        idle parts' rate spread beyond what their ticks make. Two parts of ``idle_part_s``
        whose readings are each off by up to one resolution differ by up to 2 resolutions /
        ``idle_part_s`` in rate with the rate unchanged. That share is a fixed error per
        reading, never a rate: carried over the window as one, it multiplied the ticks' error
        by window / part (about ten times on a queued-cancel window against 1/3 s parts)."""
        if not self.cpu_usable or self.idle_rate_spread is None:
            return 0.0
        spread, res = self.idle_rate_spread, self.cpu_resolution_s
        if res is not None and self.idle_part_s:
            spread = max(0.0, spread - 2.0 * res / self.idle_part_s)
        return self._service_s(spread * window_s)

    def cpu_noise_s(self, window_s: float) -> float:
        """Seconds of service the CPU estimate can show over ``window_s`` when nothing ran:
        the idle rate's variation plus what CPU-time accounting cannot resolve (so never
        below that floor where the resolution is known)."""
        return self.idle_variation_s(window_s) + self.resolution_s(window_s)

    def ran_on_s(self, window: WorkWindow) -> float | None:
        """Seconds of service the server spent after the cut: the larger estimate of the
        signals present (a gauge that lies low does not hide CPU that was burnt)."""
        estimates: list[float] = []
        if window.busy_s is not None:
            estimates.append(window.busy_s)
        idle, busy = self.idle_cpu_rate, self.busy_cpu_rate
        if window.cpu_s is not None and idle is not None and busy is not None and busy > idle:
            estimates.append(max(0.0, window.cpu_s - idle * window.seconds) / (busy - idle))
        return max(estimates) if estimates else None


class WorkMeter:
    """Reads the work signals of one server: its ``/metrics`` and (a reader of its process
    tree known: its pid here, or an agent) its CPU time."""

    def __init__(self, client: OmniClient, tree: TreeReader | None, poll_s: float) -> None:
        self.client, self.tree, self.poll_s = client, tree, poll_s
        self.gauges = False  # /metrics carried the running/waiting gauges at least once
        self.cpu = False

    async def processes(self) -> int | None:
        """How many processes the server's tree holds now (None: no tree, or not counted)."""
        tree = self.tree
        if tree is None:
            return None
        try:
            sample = await asyncio.to_thread(tree.sample, time.monotonic())
        except Exception:  # an agent that did not answer: the count is unknown, not zero
            return None
        return sample.processes if sample.processes > 0 else None

    def signals(self) -> list[str]:
        found = [f"{self.tree.source} CPU time"] if self.cpu and self.tree is not None else []
        return found + ([f"{RUNNING} + {WAITING}"] if self.gauges else [])

    async def read(self) -> WorkReading:
        values: dict[str, float] = {}
        try:
            raw = await self.client.send_raw("GET", "/metrics", timeout_s=5.0)
            if raw.ok:
                values = parse_work_metrics(raw.body.decode("utf-8", "replace"))
        except ClientError:
            values = {}
        tree = self.tree
        cpu = None if tree is None else await asyncio.to_thread(tree.cpu_seconds)
        busy = None
        if RUNNING in values or WAITING in values:
            busy = values.get(RUNNING, 0.0) + values.get(WAITING, 0.0)
            self.gauges = True
        self.cpu = self.cpu or cpu is not None
        return WorkReading(time.monotonic(), cpu, busy, values.get(EXEC_COUNT),
                           values.get(STEPS_SUM))  # fmt: skip

    async def watch(self, window_s: float, start: WorkReading | None = None) -> WorkWindow:
        """Poll for ``window_s`` from ``start`` (or now); busy time counts from the start."""
        first = start or await self.read()
        return await self.watch_until(first, lambda: first.at + window_s)

    async def watch_until(self, first: WorkReading, end_at: Callable[[], float]) -> WorkWindow:
        """Poll from ``first`` until ``end_at()`` (monotonic seconds, read on every poll, so a
        window opened before its end is known can be closed later)."""
        window, _ = await self._follow(first, end_at)
        return window

    async def contiguous(self, count: int, part_s: float) -> list[WorkWindow]:
        """``count`` windows of ``part_s``, each opened on the reading that closed the one
        before: together they are one window from the first reading to the last, whose CPU
        time is one difference of two readings (one resolution), not ``count`` of them."""
        reading = await self.read()
        parts = []
        for _ in range(count):
            window, reading = await self._follow(reading, _fixed(reading.at + part_s))
            parts.append(window)
        return parts

    async def _follow(self, first: WorkReading, end_at: Callable[[], float],
                      ) -> tuple[WorkWindow, WorkReading]:  # fmt: skip
        """:meth:`watch_until`, with the reading that closed the window."""
        last, busy_until = first, (0.0 if first.busy is not None else None)
        while True:
            await asyncio.sleep(self.poll_s)
            last = await self.read()
            if last.busy is not None:
                busy_until = busy_until or 0.0
                if last.busy > 0:
                    busy_until = last.at - first.at
            if last.at >= end_at():
                break
        return WorkWindow(last.at - first.at, _delta(first.cpu_s, last.cpu_s), busy_until,
                          _delta(first.executions, last.executions),
                          _delta(first.steps, last.steps)), last  # fmt: skip


def _fixed(moment: float) -> Callable[[], float]:
    """An ``end_at`` for a window whose end is known when it opens."""
    return lambda: moment


def _delta(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else b - a
