"""Sampling a server's process tree in the background: memory, descriptors, threads, temp files.

One thread takes a sample every ``interval_s`` (and one at start and stop): process-tree RSS,
PSS and USS (``memory_full_info``, where the kernel lets us read smaps), open file descriptors,
threads, the number of files under named directories (temp dir, ``/dev/shm``) and, when NVML is
importable and finds devices, per-GPU used memory. The series renders as CSV or JSON Lines bytes
for an evidence artifact.
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

import psutil

from omniqual.deploy.process_tree import tree

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class GpuMemory:
    index: int
    used_bytes: int
    total_bytes: int


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
    dir_files: tuple[tuple[str, int], ...] = ()
    gpus: tuple[GpuMemory, ...] = field(default=())


def default_watch_dirs() -> tuple[Path, ...]:
    found = [Path(tempfile.gettempdir())]
    if Path("/dev/shm").is_dir():
        found.append(Path("/dev/shm"))
    return tuple(found)


def count_files(directory: Path) -> int:
    """Regular files anywhere under ``directory`` (0 when it does not exist)."""
    total = 0
    for _root, _dirs, files in os.walk(directory, onerror=lambda _exc: None):
        total += len(files)
    return total


def _nvml() -> ModuleType | None:
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


def _gpu_memory(nvml: ModuleType | None) -> tuple[GpuMemory, ...]:
    if nvml is None:
        return ()
    found = []
    try:
        for index in range(nvml.nvmlDeviceGetCount()):
            info = nvml.nvmlDeviceGetMemoryInfo(nvml.nvmlDeviceGetHandleByIndex(index))
            found.append(GpuMemory(index, int(info.used), int(info.total)))
    except Exception:
        logger.debug("NVML query failed", exc_info=True)
    return tuple(found)


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
        gpus=_gpu_memory(nvml),
    )


class ProcessObserver:
    """``with ProcessObserver(pid) as obs: ...`` then ``obs.samples`` (or ``start``/``stop``)."""

    def __init__(
        self,
        pid: int,
        *,
        interval_s: float = 1.0,
        watch_dirs: Iterable[Path] = (),
        gpu: bool = True,
    ) -> None:
        if interval_s <= 0:
            raise ValueError("interval_s must be positive")
        self.pid = pid
        self.interval_s = interval_s
        self.watch_dirs = tuple(watch_dirs)
        self._gpu = gpu
        self._samples: list[ObserverSample] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = 0.0
        self._nvml: ModuleType | None = None

    def start(self) -> "ProcessObserver":
        if self._thread is not None:
            raise RuntimeError("observer already started")
        self._nvml = _nvml() if self._gpu else None
        self._started = time.monotonic()
        self._take()
        self._thread = threading.Thread(target=self._run, name=f"observer-{self.pid}", daemon=True)
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

    def _take(self) -> None:
        sample = sample_tree(
            self.pid, watch_dirs=self.watch_dirs, started=self._started, nvml=self._nvml
        )
        with self._lock:
            self._samples.append(sample)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self._take()
            except Exception:  # a sampling hiccup must not end the series
                logger.debug("sampling pid %d failed", self.pid, exc_info=True)

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
