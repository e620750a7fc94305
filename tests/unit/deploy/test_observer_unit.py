"""Observer samples of the test process itself, and their CSV/JSONL forms."""

import csv
import io
import json
import os
import time
from pathlib import Path

import pytest

from omniqual.deploy.observer import (
    GpuMemory,
    ObserverSample,
    ProcessObserver,
    count_files,
    default_watch_dirs,
    sample_tree,
    samples_to_csv,
    samples_to_jsonl,
)


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


def test_count_files_of_a_missing_directory_is_zero(tmp_path: Path) -> None:
    assert count_files(tmp_path / "absent") == 0


def test_default_watch_dirs_include_the_temp_dir() -> None:
    dirs = default_watch_dirs()
    assert dirs and all(d.is_dir() for d in dirs)


def test_observer_collects_a_series_with_first_and_last_samples() -> None:
    observer = ProcessObserver(os.getpid(), interval_s=0.05, gpu=False).start()
    time.sleep(0.3)
    samples = observer.stop()
    assert len(samples) >= 3
    assert samples[0].elapsed_s < samples[-1].elapsed_s
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
    assert row["pss_bytes"] == "" and row["rss_bytes"] == "100"
    record = json.loads(samples_to_jsonl([sample]))
    assert record["gpus"] == [{"index": 0, "used_bytes": 10, "total_bytes": 80}]
    assert record["dir_files"] == [["/dev/shm", 4]]
