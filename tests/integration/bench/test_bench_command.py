"""``omniqual bench`` end to end: a real process against an instant local HTTP server process,
two short constant-rate phases, the result JSON read back."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

SERVER = Path(__file__).resolve().parents[2] / "bench" / "instant_server.py"
MIX = (
    "name: it-mix\nseed: 5\nentries:\n  - {name: img, task: t2i, endpoint: image, weight: 1,"
    " shape: {width: 64, height: 64, steps: 2}}\n"
)


@pytest.fixture
def instant_url() -> Iterator[str]:
    server = subprocess.Popen([sys.executable, str(SERVER)], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        yield f"http://127.0.0.1:{int(server.stdout.readline())}"
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_bench_writes_the_result_json(tmp_path: Path, instant_url: str) -> None:
    mix = tmp_path / "mix.yaml"
    mix.write_text(MIX, encoding="utf-8")
    result = tmp_path / "result.json"
    done = subprocess.run(
        [sys.executable, "-m", "omniqual", "bench", "--target", instant_url, "--workload",
         str(mix), "--rates", "20,300", "--profile", "constant", "--duration", "2",
         "--seed", "11", "--max-issue-lag-ms", "1000", "-o", str(result)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    doc = json.loads(result.read_text(encoding="utf-8"))
    assert doc["schema_version"] == 1 and doc["mode"] == "rates"
    assert doc["duration"] is None  # several phases: no top-level vLLM-Omni figures
    assert doc["transport"].startswith("http1 pool (httptools") and "uvloop" in doc["transport"]
    slow, fast = doc["phases"]
    assert (slow["offered_rate"], fast["offered_rate"]) == (20.0, 300.0)
    # constant arrivals at k/rate below 2 s: 39 and 599 requests, all answered.
    assert (slow["completed_requests"], fast["completed_requests"]) == (39, 599)
    assert slow["failed_requests"] == fast["failed_requests"] == 0
    assert slow["latency_p99"] == "insufficient (n < 459)"
    assert isinstance(slow["latency_p50"], float)
    assert isinstance(fast["latency_p99"], float) and fast["latency_p99"] > 0
    assert fast["throughput_qps"] > 0 and fast["duration"] > 0
    assert slow["verdict"] == "INVALID" and doc["verdict"] == "INVALID"
    assert any("p99 needs >= 459" in reason for reason in doc["reasons"])
    assert done.returncode == 1, done.stderr  # an INVALID run is exit 1, with the JSON written
    assert "insufficient (n < 459)" in done.stderr
    assert "verdict: INVALID" in done.stderr


def test_bench_sweep_records_its_probes(tmp_path: Path, instant_url: str) -> None:
    mix = tmp_path / "mix.yaml"
    mix.write_text(MIX, encoding="utf-8")
    result = tmp_path / "sweep.json"
    subprocess.run(
        [sys.executable, "-m", "omniqual", "bench", "--target", instant_url, "--workload",
         str(mix), "--sweep", "--slo", "p50:5", "--max-rate", "50", "--requests", "60",
         "--profile", "constant", "-o", str(result)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    doc = json.loads(result.read_text(encoding="utf-8"))
    sweep = doc["sweep"]
    # An instant server meets p50 <= 5 s at every rate: the search climbs to --max-rate.
    assert doc["mode"] == "sweep" and sweep["stop_reason"] == "max_rate_passes"
    assert sweep["saturation_rate"] == 50.0 and (sweep["slo_percentile"], sweep["slo_bound_s"]) == (
        50.0, 5.0,
    )  # fmt: skip
    assert len(doc["phases"]) == len(sweep["probe_verdicts"]) >= 1
    assert doc["phases"][-1]["offered_rate"] == 50.0
    assert all(p["completed_requests"] == 60 for p in doc["phases"])
