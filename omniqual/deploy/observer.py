"""Sampling a server's process tree in the background: memory, descriptors, threads, temp files.

One thread takes a sample every ``interval_s`` (and one at start and stop): process-tree RSS,
PSS and USS (``memory_full_info``, where the kernel lets us read smaps), open file descriptors,
threads, CPU seconds (user + system) spent by the tree, the number of files under named
directories (temp dir, ``/dev/shm``; ``None`` when a directory is missing or unreadable, never a
silent zero) and, when NVML is importable and finds devices, per-GPU memory: device-wide used
bytes and the bytes NVML's compute-process list attributes to the tree's own pids (a shared
device holds other processes' memory too). The series renders as CSV or JSON Lines bytes for an
evidence artifact.

What is sampled is a :class:`TreeReader`: :class:`LocalTree` reads a process on this host; an
agent's reader (:mod:`omniqual.deploy.agent.remote`) reads one on another host through
``omniqual agent``, so a gate judges both alike. ``source`` says which one gave a series.
"""

import csv
import io
import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Protocol

import psutil

from omniqual.deploy.process_tree import tree

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class GpuMemory:
    index: int
    used_bytes: int
    """Device-wide, every process on the device included."""
    total_bytes: int
    tree_used_bytes: int | None = None
    """What NVML's running compute-process list attributes to the observed tree's pids; None when
    NVML could not list processes or withheld a tree process's usage."""


@dataclass(frozen=True, slots=True)
class ObserverSample:
    elapsed_s: float
    """Seconds since the observer started."""
    at: float
    """Unix time."""
    processes: int
    rss_bytes: int
    pss_bytes: int | None
    """None when smaps could not be read for some process of the tree."""
    uss_bytes: int | None
    open_fds: int | None
    threads: int
    dir_files: tuple[tuple[str, int | None], ...] = ()
    gpus: tuple[GpuMemory, ...] = field(default=())
    cpu_s: float | None = None
    """User + system CPU seconds of the tree's living processes; None when unreadable."""
    nvml: bool = False
    """NVML was initialised for this sample (False: no GPU figures could exist)."""


def default_watch_dirs() -> tuple[Path, ...]:
    found = [Path(tempfile.gettempdir())]
    if Path("/dev/shm").is_dir():
        found.append(Path("/dev/shm"))
    return tuple(found)


def count_files(directory: Path) -> int | None:
    """Regular files anywhere under ``directory``; None when it is missing or any part of it is
    unreadable (a count that skipped what it could not see would read as "no residue")."""
    if not directory.is_dir():
        return None
    errors: list[OSError] = []
    total = 0
    for _root, _dirs, files in os.walk(directory, onerror=errors.append):
        total += len(files)
    return None if errors else total


def open_nvml() -> ModuleType | None:
    """NVML, initialised; None without nvidia-ml-py, a driver or a device."""
    try:
        import pynvml  # optional: nvidia-ml-py, GPU hosts only
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except Exception:  # no driver / no device: no GPU samples
        return None
    module: ModuleType = pynvml
    return module


def _tree_usage(nvml: ModuleType, handle: object, pids: frozenset[int]) -> int | None:
    try:
        running = nvml.nvmlDeviceGetComputeRunningProcesses(handle)
    except Exception:  # not supported on this device/driver: unattributable
        logger.debug("NVML process list failed", exc_info=True)
        return None
    total = 0
    for proc in running:
        if int(proc.pid) not in pids:
            continue
        used = getattr(proc, "usedGpuMemory", None)
        if used is None:  # NVML_VALUE_NOT_AVAILABLE (e.g. no permission under MIG/containers)
            return None
        total += int(used)
    return total


def gpu_memory(
    nvml: ModuleType | None, pids: frozenset[int] = frozenset()
) -> tuple[GpuMemory, ...]:
    """Per device: used/total bytes and the part NVML attributes to ``pids``."""
    if nvml is None:
        return ()
    found = []
    try:
        for index in range(nvml.nvmlDeviceGetCount()):
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            info = nvml.nvmlDeviceGetMemoryInfo(handle)
            found.append(GpuMemory(index, int(info.used), int(info.total),
                                   _tree_usage(nvml, handle, pids)))  # fmt: skip
    except Exception:
        logger.debug("NVML query failed", exc_info=True)
    return tuple(found)


def tree_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of the tree rooted at ``pid`` (None when it is gone)."""
    procs = tree(pid)
    if not procs:
        return None
    total = 0.0
    for proc in procs:
        try:
            times = proc.cpu_times()
        except psutil.NoSuchProcess:
            continue  # an exited worker: its time left with it
        except psutil.AccessDenied:
            return None
        total += times.user + times.system
    return total


def sample_tree(
    pid: int,
    *,
    watch_dirs: Sequence[Path] = (),
    started: float | None = None,
    nvml: ModuleType | None = None,
) -> ObserverSample:
    """One sample of the tree rooted at ``pid`` (zeros when the process is gone)."""
    now = time.monotonic()
    rss = threads = 0
    cpu: float | None = 0.0
    pss: int | None = 0
    uss: int | None = 0
    fds: int | None = 0
    procs = tree(pid)
    for proc in procs:
        try:
            with proc.oneshot():
                rss += proc.memory_info().rss
                threads += proc.num_threads()
                try:
                    times = proc.cpu_times()
                    cpu = None if cpu is None else cpu + times.user + times.system
                except psutil.AccessDenied:
                    cpu = None
                try:
                    full = proc.memory_full_info()
                    pss = None if pss is None else pss + full.pss
                    uss = None if uss is None else uss + full.uss
                except (psutil.AccessDenied, AttributeError):
                    pss = uss = None
                try:
                    fds = None if fds is None else fds + proc.num_fds()
                except psutil.AccessDenied:
                    fds = None
        except psutil.NoSuchProcess:
            continue
    return ObserverSample(
        elapsed_s=now - (started if started is not None else now),
        at=time.time(),
        processes=len(procs),
        rss_bytes=rss,
        pss_bytes=pss,
        uss_bytes=uss,
        open_fds=fds,
        threads=threads,
        dir_files=tuple((str(d), count_files(d)) for d in watch_dirs),
        gpus=gpu_memory(nvml, frozenset(p.pid for p in procs)),
        cpu_s=cpu if procs else None,
        nvml=nvml is not None,
    )


LOCAL_SOURCE = "process-tree"


class TreeReader(Protocol):
    """Where samples of a server's process tree come from."""

    @property
    def source(self) -> str:
        """What gave the readings, as evidence records it (``process-tree``, ``agent:...``)."""
        ...

    @property
    def watch_dirs(self) -> tuple[Path, ...]:
        """The directories whose files each sample counts (paths on the server's host)."""
        ...

    def open(self) -> None:
        """Get ready to sample (NVML); called once, before the first sample."""

    def sample(self, started: float) -> ObserverSample:
        """One sample now; ``elapsed_s`` counts from ``started`` (this host's monotonic clock)."""
        ...

    def cpu_seconds(self) -> float | None:
        """User + system CPU seconds of the tree now (None when it is gone or unreadable)."""
        ...


class LocalTree:
    """The process tree rooted at ``pid`` on this host."""

    source = LOCAL_SOURCE

    def __init__(self, pid: int, *, watch_dirs: Iterable[Path] = (), gpu: bool = True) -> None:
        self.pid = pid
        self.watch_dirs = tuple(watch_dirs)
        self._gpu = gpu
        self._nvml: ModuleType | None = None

    def open(self) -> None:
        self._nvml = open_nvml() if self._gpu else None

    def sample(self, started: float) -> ObserverSample:
        return sample_tree(self.pid, watch_dirs=self.watch_dirs, started=started, nvml=self._nvml)

    def cpu_seconds(self) -> float | None:
        return tree_cpu_seconds(self.pid)


class ProcessObserver:
    """``with ProcessObserver(pid) as obs: ...`` then ``obs.samples`` (or ``start``/``stop``);
    ``ProcessObserver.of(reader)`` samples any :class:`TreeReader`."""

    def __init__(
        self,
        pid: int,
        *,
        interval_s: float = 1.0,
        watch_dirs: Iterable[Path] = (),
        gpu: bool = True,
    ) -> None:
        self._setup(LocalTree(pid, watch_dirs=watch_dirs, gpu=gpu), interval_s, f"pid {pid}")

    @classmethod
    def of(cls, reader: TreeReader, *, interval_s: float = 1.0) -> "ProcessObserver":
        observer = cls.__new__(cls)
        observer._setup(reader, interval_s, reader.source)
        return observer

    def _setup(self, reader: TreeReader, interval_s: float, name: str) -> None:
        if interval_s <= 0:
            raise ValueError("interval_s must be positive")
        self.reader = reader
        self.interval_s = interval_s
        self.watch_dirs = reader.watch_dirs
        self._name = name
        self._samples: list[ObserverSample] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = 0.0

    def start(self) -> "ProcessObserver":
        if self._thread is not None:
            raise RuntimeError("observer already started")
        self.reader.open()
        self._started = time.monotonic()
        self._take()
        self._thread = threading.Thread(target=self._run, name=f"observer-{self._name}",
                                        daemon=True)  # fmt: skip
        self._thread.start()
        return self

    def stop(self) -> tuple[ObserverSample, ...]:
        if self._thread is not None and not self._stop.is_set():
            self._stop.set()
            self._thread.join()
            self._take()
        return self.samples

    @property
    def samples(self) -> tuple[ObserverSample, ...]:
        with self._lock:
            return tuple(self._samples)

    def sample_now(self) -> ObserverSample:
        """One sample now, with the observer's reader (and NVML handle), outside the series."""
        return self.reader.sample(self._started)

    def _take(self) -> None:
        sample = self.reader.sample(self._started)
        with self._lock:
            self._samples.append(sample)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self._take()
            except Exception:  # a sampling hiccup must not end the series
                logger.debug("sampling %s failed", self._name, exc_info=True)

    def __enter__(self) -> "ProcessObserver":
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _flat(sample: ObserverSample) -> dict[str, object]:
    row: dict[str, object] = {
        k: v for k, v in asdict(sample).items() if k not in ("dir_files", "gpus")
    }
    for directory, count in sample.dir_files:
        row[f"files:{directory}"] = count
    for gpu in sample.gpus:
        row[f"gpu{gpu.index}_used_bytes"] = gpu.used_bytes
        row[f"gpu{gpu.index}_total_bytes"] = gpu.total_bytes
        row[f"gpu{gpu.index}_tree_used_bytes"] = gpu.tree_used_bytes
    return row


def samples_to_csv(samples: Sequence[ObserverSample]) -> bytes:
    rows = [_flat(s) for s in samples]
    columns: list[str] = []
    for row in rows:
        columns += [c for c in row if c not in columns]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode()


def samples_to_jsonl(samples: Sequence[ObserverSample]) -> bytes:
    return b"".join(json.dumps(asdict(s), sort_keys=True).encode() + b"\n" for s in samples)
