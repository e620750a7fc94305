"""Observer samples of the test process itself, and their CSV/JSONL forms."""

import csv
import io
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from omniqual.deploy import observer as observer_module
from omniqual.deploy.observer import (
    GpuMemory,
    ObserverSample,
    ProcessObserver,
    count_files,
    default_watch_dirs,
    gpu_memory,
    sample_tree,
    samples_to_csv,
    samples_to_jsonl,
    tree_cpu_seconds,
)
from tests.fakes.fake_pynvml import fake_pynvml


def test_sample_of_this_process(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("x")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b").write_text("y")
    sample = sample_tree(os.getpid(), watch_dirs=[tmp_path])
    assert sample.processes >= 1
    assert sample.rss_bytes > 10 * 2**20
    assert sample.pss_bytes is not None and 0 < sample.pss_bytes <= sample.rss_bytes
    assert sample.open_fds is not None and sample.open_fds >= 3
    assert sample.threads >= 1
    assert sample.dir_files == ((str(tmp_path), 2),)
    assert sample.elapsed_s == 0


def test_count_files_of_a_missing_directory_is_absent_not_zero(tmp_path: Path) -> None:
    assert count_files(tmp_path / "absent") is None
    (tmp_path / "plain").write_text("x")
    assert count_files(tmp_path / "plain") is None  # not a directory: nothing was counted
    assert count_files(tmp_path) == 1


def test_default_watch_dirs_include_the_temp_dir() -> None:
    dirs = default_watch_dirs()
    assert dirs and all(d.is_dir() for d in dirs)


class TickClock:
    """The observer's clock, moved one second per reading: its elapsed times are exact and
    strictly increasing however slowly this host runs the sampling thread."""

    def __init__(self) -> None:
        self.now = 0.0
        self.lock = threading.Lock()

    def monotonic(self) -> float:
        with self.lock:
            self.now += 1.0
            return self.now

    def time(self) -> float:
        return 1_700_000_000.0 + self.now


def test_observer_collects_a_series_with_first_and_last_samples(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("omniqual.deploy.observer.time", TickClock())
    real_sample, sampled, calls = observer_module.sample_tree, threading.Event(), [0]

    def counted(*args: Any, **kwargs: Any) -> ObserverSample:
        calls[0] += 1
        if calls[0] >= 3:  # the one at start, then two from the sampling thread
            sampled.set()
        return real_sample(*args, **kwargs)

    monkeypatch.setattr(observer_module, "sample_tree", counted)
    observer = ProcessObserver(os.getpid(), interval_s=0.01, gpu=False).start()
    # Waits for the thread's samples, not for a span of time (the timeout only ends a hang).
    assert sampled.wait(timeout=120), "the sampling thread took no sample"
    samples = observer.stop()
    assert len(samples) >= 4  # start, two from the thread, stop
    elapsed = [s.elapsed_s for s in samples]
    assert elapsed == sorted(set(elapsed)) and elapsed[0] == 1.0  # one tick after the start
    assert observer.stop() == samples  # stopping twice changes nothing
    with pytest.raises(RuntimeError):
        observer.start()


def test_interval_must_be_positive() -> None:
    with pytest.raises(ValueError):
        ProcessObserver(1, interval_s=0)


def test_csv_and_jsonl_flatten_dirs_and_gpus() -> None:
    sample = ObserverSample(
        elapsed_s=1.0, at=1700000000.0, processes=2, rss_bytes=100, pss_bytes=None,
        uss_bytes=None, open_fds=7, threads=3, dir_files=(("/dev/shm", 4),),
        gpus=(GpuMemory(0, 10, 80),),
    )  # fmt: skip
    [row] = list(csv.DictReader(io.StringIO(samples_to_csv([sample]).decode())))
    assert row["files:/dev/shm"] == "4" and row["gpu0_used_bytes"] == "10"
    assert row["gpu0_tree_used_bytes"] == ""
    assert row["pss_bytes"] == "" and row["rss_bytes"] == "100"
    record = json.loads(samples_to_jsonl([sample]))
    assert record["gpus"] == [
        {"index": 0, "used_bytes": 10, "total_bytes": 80, "tree_used_bytes": None}
    ]
    assert record["dir_files"] == [["/dev/shm", 4]]


def test_tree_cpu_seconds_count_the_work_done() -> None:
    before = tree_cpu_seconds(os.getpid())
    deadline = time.process_time() + 0.2
    while time.process_time() < deadline:
        pass
    after = tree_cpu_seconds(os.getpid())
    assert before is not None and after is not None and after - before >= 0.15
    assert tree_cpu_seconds(2**22 + 12345) is None  # no such process: absent, not zero


def test_gpu_memory_is_attributed_to_the_tree_and_kept_device_wide() -> None:
    # The H200 figure from the issue: 9.23 GB for the server's pid, 9.20 GiB + another tenant
    # device-wide. Only the tree's pids count as the server's.
    me, other = os.getpid(), 999_999
    nvml = fake_pynvml(used=9_880_000_000 + 2_000_000_000, total=150_000_000_000,
                       procs=[(me, 9_230_000_000), (other, 2_000_000_000)])  # fmt: skip
    [gpu] = gpu_memory(nvml, frozenset({me}))
    assert gpu.tree_used_bytes == 9_230_000_000
    assert gpu.used_bytes == 11_880_000_000


def test_gpu_usage_nvml_withholds_is_absent_not_zero() -> None:
    nvml = fake_pynvml(used=10, total=80, procs=[(os.getpid(), None)])
    [gpu] = gpu_memory(nvml, frozenset({os.getpid()}))
    assert gpu.tree_used_bytes is None
    broken = fake_pynvml(used=10, total=80, procs=None)
    assert gpu_memory(broken, frozenset({1}))[0].tree_used_bytes is None


def test_observer_samples_gpus_through_nvml(monkeypatch: pytest.MonkeyPatch) -> None:
    nvml = fake_pynvml(used=10, total=80, procs=[(os.getpid(), 7)])
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    observer = ProcessObserver(os.getpid(), interval_s=0.05).start()
    samples = observer.stop()
    assert all(s.nvml and s.gpus[0].tree_used_bytes == 7 for s in samples)
    assert observer.sample_now().gpus == (GpuMemory(0, 10, 80, 7),)
    assert all(s.cpu_s is not None and s.cpu_s > 0 for s in samples)


def test_observer_without_nvml_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import fails: no GPU figures can exist
    samples = ProcessObserver(os.getpid(), interval_s=0.05).start().stop()
    assert samples and not any(s.nvml or s.gpus for s in samples)
