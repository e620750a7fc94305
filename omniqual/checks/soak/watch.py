"""Watching a server while the soak and abort gates load it: a resource series and a /health probe.

Resources come from the process tree through ``deploy.observer`` when a reader of it is known:
the server's pid on this host, or an ``omniqual agent`` beside a server on another host (PSS
where smaps is readable, else RSS; open FDs; files under watched directories; the series names
its source, ``process-tree`` or ``agent:process-tree``). Without one (a deployment given by
URL) the standard Prometheus process gauges of ``/metrics``
(``process_resident_memory_bytes``, ``process_open_fds``) stand in; those cover the API server
process only, and the series says which source it used. A figure that could not be read stays
``None`` (a missing or unreadable watched directory included), so judges can call the signal
absent instead of reading it as zero. GPU memory comes from NVML through the observer: the
server tree's own usage and the device-wide figure, both kept. The health probe polls ``/health`` on
its own client with a short deadline, so a server that hangs shows up as a timed-out probe.
"""

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType

from omniqual.client import ClientError, OmniClient
from omniqual.deploy.observer import ObserverSample, ProcessObserver, TreeReader, count_files
from omniqual.loadgen.trend import TrendFit, fit_trend

logger = logging.getLogger(__name__)

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class ResourcePoint:
    elapsed_s: float
    source: str  # "process-tree", "agent:process-tree" or "metrics"
    rss_bytes: int | None
    pss_bytes: int | None
    open_fds: int | None
    temp_files: int | None
    gpu_tree_bytes: int | None = None
    """GPU memory NVML attributes to the server's process tree, summed over devices."""
    gpu_device_bytes: int | None = None
    """Device-wide used GPU memory, summed over devices (other processes included)."""
    nvml: bool = False
    """NVML answered for this point (False: no GPU figure could exist)."""

    @property
    def memory_bytes(self) -> int | None:
        return self.pss_bytes if self.pss_bytes is not None else self.rss_bytes


def parse_process_gauges(text: str) -> tuple[int | None, int | None]:
    """(resident bytes, open fds) from Prometheus text; None where the gauge is absent."""
    rss = fds = None
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        try:
            if name == "process_resident_memory_bytes":
                rss = int(float(value.split()[0]))
            elif name == "process_open_fds":
                fds = int(float(value.split()[0]))
        except (ValueError, IndexError):
            continue
    return rss, fds


class ResourceWatch:
    """``async with ResourceWatch(...) as watch:`` samples in the background; ``snapshot()``
    takes one point now; ``points`` is the series so far (elapsed from the watch's start).
    With a ``tree`` reader the points are its samples (and its watched directories); without
    one, ``/metrics`` gauges and the files under ``watch_dirs`` on this host."""

    def __init__(
        self,
        client: OmniClient,
        *,
        tree: TreeReader | None,
        watch_dirs: Sequence[Path] = (),
        interval_s: float = 1.0,
    ) -> None:
        self.client = client
        self.tree = tree
        self.watch_dirs = tree.watch_dirs if tree is not None else tuple(watch_dirs)
        self.interval_s = interval_s
        self.source = tree.source if tree is not None else "metrics"
        self._t0 = time.time()
        self._observer: ProcessObserver | None = None
        self._task: asyncio.Task[None] | None = None
        self._scraped: list[ResourcePoint] = []

    @property
    def started_at_unix(self) -> float:
        """Wall-clock time zero of ``points``' ``elapsed_s``."""
        return self._t0

    @property
    def points(self) -> tuple[ResourcePoint, ...]:
        if self._observer is not None:
            return tuple(self._from_sample(s) for s in self._observer.samples)
        return tuple(self._scraped)

    async def __aenter__(self) -> "ResourceWatch":
        self._t0 = time.time()
        if self.tree is not None:
            self._observer = ProcessObserver.of(self.tree, interval_s=self.interval_s)
            await asyncio.to_thread(self._observer.start)
        else:
            self._task = asyncio.create_task(self._scrape_loop())
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:  # fmt: skip
        if self._observer is not None:
            await asyncio.to_thread(self._observer.stop)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def snapshot(self) -> ResourcePoint:
        if self._observer is not None:
            return self._from_sample(await asyncio.to_thread(self._observer.sample_now))
        if self.tree is not None:
            tree = self.tree
            sample = await asyncio.to_thread(tree.sample, time.monotonic())
            return self._from_sample(sample)
        return await self._scrape()

    def _from_sample(self, sample: ObserverSample) -> ResourcePoint:
        return ResourcePoint(
            sample.at - self._t0, self.source, sample.rss_bytes, sample.pss_bytes,
            sample.open_fds, _total(count for _, count in sample.dir_files),
            _total(g.tree_used_bytes for g in sample.gpus),
            _total(g.used_bytes for g in sample.gpus), sample.nvml,
        )  # fmt: skip

    async def _scrape(self) -> ResourcePoint:
        rss = fds = None
        try:
            raw = await self.client.send_raw("GET", "/metrics", timeout_s=5.0)
            if raw.ok:
                rss, fds = parse_process_gauges(raw.body.decode("utf-8", "replace"))
        except ClientError:
            logger.debug("metrics scrape failed", exc_info=True)
        files = _total([await asyncio.to_thread(count_files, d) for d in self.watch_dirs])
        return ResourcePoint(time.time() - self._t0, self.source, rss, None, fds, files)

    async def _scrape_loop(self) -> None:
        while True:
            self._scraped.append(await self._scrape())
            await asyncio.sleep(self.interval_s)


def _total(values: Iterable[int | None]) -> int | None:
    """The sum, or None when there is nothing to sum or any part is unknown."""
    found = list(values)
    if not found or any(v is None for v in found):
        return None
    return sum(v for v in found if v is not None)


def points_jsonl(points: Sequence[ResourcePoint]) -> bytes:
    return b"".join(json.dumps(asdict(p), sort_keys=True).encode() + b"\n" for p in points)


def memory_trend(
    points: Sequence[ResourcePoint], *, confidence: float = 0.95,
    value: Callable[[ResourcePoint], int | None] = lambda p: p.memory_bytes,
) -> TrendFit | None:  # fmt: skip
    """Least-squares memory slope (bytes per second) with its CI; None with < 3 usable points.
    ``value`` picks the figure (host memory by default; GPU memory of the tree)."""
    usable = [(p.elapsed_s, v) for p in points if (v := value(p)) is not None]
    if len(usable) < 3 or len({x for x, _ in usable}) < 2:
        return None
    xs, ys = zip(*usable, strict=True)
    return fit_trend(xs, [float(y) for y in ys], confidence=confidence)


@dataclass(frozen=True, slots=True)
class HealthEvent:
    elapsed_s: float
    status: int | None
    latency_s: float
    error: str | None

    @property
    def healthy(self) -> bool:
        return self.status == 200


class HealthProbe:
    """Polls ``/health`` every ``interval_s`` (deadline ``timeout_s``) while the block runs."""

    def __init__(self, client: OmniClient, *, interval_s: float, timeout_s: float) -> None:
        self.client = client
        self.interval_s = interval_s
        self.timeout_s = timeout_s
        self.events: list[HealthEvent] = []
        self._t0 = time.monotonic()
        self._task: asyncio.Task[None] | None = None

    async def check(self) -> HealthEvent:
        started = time.monotonic()
        status: int | None = None
        error: str | None = None
        try:
            status = (await self.client.send_raw("GET", "/health", timeout_s=self.timeout_s)).status
        except ClientError as exc:
            error = type(exc).__name__
        event = HealthEvent(started - self._t0, status, time.monotonic() - started, error)
        self.events.append(event)
        return event

    async def _loop(self) -> None:
        while True:
            await self.check()
            await asyncio.sleep(self.interval_s)

    async def __aenter__(self) -> "HealthProbe":
        self._t0 = time.monotonic()
        self._task = asyncio.create_task(self._loop())
        return self

    async def __aexit__(self, *_exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def failures(self) -> list[HealthEvent]:
        return [e for e in self.events if not e.healthy]

    def describe(self, event: HealthEvent) -> str:
        what = f"HTTP {event.status}" if event.status is not None else (
            f"no answer within {self.timeout_s:g} s ({event.error})"
        )
        return f"GET /health at t={event.elapsed_s:.1f} s: {what}"
