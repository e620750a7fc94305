"""The observer sampling a real, growing server process."""

import csv
import io
import json
import time
from pathlib import Path

import pytest

from omniqual.deploy.launcher import LaunchOptions, launched
from omniqual.deploy.observer import ProcessObserver, samples_to_csv, samples_to_jsonl

pytestmark = pytest.mark.integration


def test_samples_follow_a_growing_server(fake_recipe, options: LaunchOptions, tmp_path: Path):
    grow_dir = tmp_path / "scratch"
    grow_dir.mkdir()
    recipe = fake_recipe("grow", "--grow-dir", str(grow_dir))
    with launched(recipe, **options) as target:
        with ProcessObserver(target.pid, interval_s=0.2, watch_dirs=[grow_dir]) as observer:
            time.sleep(1.5)
        samples = observer.samples
    assert len(samples) >= 5
    first, last = samples[0], samples[-1]
    assert [s.elapsed_s for s in samples] == sorted(s.elapsed_s for s in samples)
    assert last.rss_bytes - first.rss_bytes >= 5 * 2**20  # 1 MiB every 0.1 s
    assert dict(last.dir_files)[str(grow_dir)] > dict(first.dir_files)[str(grow_dir)] >= 0
    assert last.pss_bytes is not None and 0 < last.pss_bytes <= last.rss_bytes
    assert last.open_fds is not None and last.open_fds >= 3
    assert last.threads >= 2 and last.processes == 1
    assert last.gpus == ()  # no NVML on this machine

    rows = list(csv.DictReader(io.StringIO(samples_to_csv(samples).decode())))
    assert len(rows) == len(samples) and int(rows[-1]["rss_bytes"]) == last.rss_bytes
    assert f"files:{grow_dir}" in rows[0]
    lines = samples_to_jsonl(samples).decode().splitlines()
    assert json.loads(lines[-1])["rss_bytes"] == last.rss_bytes


def test_observer_of_a_vanished_process_records_zeros(fake_recipe, options: LaunchOptions):
    with launched(fake_recipe("healthy"), **options) as target:
        pid = target.pid
    with ProcessObserver(pid, interval_s=0.1) as observer:
        time.sleep(0.25)
    assert all(s.processes == 0 and s.rss_bytes == 0 for s in observer.samples)
