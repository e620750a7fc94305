"""Journal read throughput: the compile path reads up to a million results.

Run: .venv/bin/python tests/bench/bench_journal_read.py [N]   (default N = 100000)

Writes a journal of N realistic results (without fsync, to build it quickly), then times
``read_run`` and ``iter_results`` against a json.loads + model_validate baseline, and prints
results/s, the ratio, and the extrapolated time for one million results. It also times what
compile reads since the columnar digest: rebuilding it from the journal (a run without one) and
loading it (every other compile), against ``iter_results`` as the named peer.
"""

import json
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from omniqual.domain.evidence import Artifact, Measurement
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.result import GateResult
from omniqual.domain.run import EnvironmentFingerprint, ResultRecorded
from omniqual.evidence.digest_files import load_current, rebuild_digest
from omniqual.evidence.journal import encode_record
from omniqual.evidence.store import RunWriter, iter_results, read_run


def build(root: Path, n: int) -> Path:
    env = EnvironmentFingerprint(
        hostname_hash="0" * 64, os="Linux", kernel="6", machine="x86_64", cpu_model="cpu",
        cpu_count=2, memory_total_bytes=1, python="CPython 3.11", omniqual_version="0.1.0",
    )  # fmt: skip
    writer = RunWriter.create(root, command=("omniqual", "run"), environment=env, run_id="bench")
    writer.close()
    at = datetime.now(UTC)
    artifact = Artifact(sha256="a" * 64, size=1, media_type="image/png", role="out", name="x")
    with (writer.run_dir / "journal.jsonl").open("ab") as handle:
        for i in range(n):
            result = GateResult(
                result_id=f"res-{i}", run_id="bench", gate_id="latency-slo", gate_version=2,
                gate_kind="load", row="task=t2i;hardware=cpu;quantization=none;parallel=tp1",
                outcome=GateOutcome.PASSED, reasons=("p95 within bound",), target="recipe-1",
                measurements=(
                    Measurement(name="p95_latency", value=1.5, unit="s", samples=200, bound=2.0,
                                ok=True),
                    Measurement(name="throughput", value=3.2, unit="img/s", samples=200),
                ),
                artifacts=(artifact,), started_at=at, finished_at=at,
            )  # fmt: skip
            handle.write(encode_record(ResultRecorded(result=result)))
    return writer.run_dir


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = build(Path(tmp), n)
        size = (run_dir / "journal.jsonl").stat().st_size
        began = time.perf_counter()
        contents = read_run(run_dir)
        read_s = time.perf_counter() - began
        assert len(contents.results) == n
        del contents
        began = time.perf_counter()
        streamed = sum(1 for _ in iter_results([run_dir]))
        iter_s = time.perf_counter() - began
        assert streamed == n
        began = time.perf_counter()
        with (run_dir / "journal.jsonl").open("rb") as handle:
            next(handle)
            baseline = sum(1 for line in handle if ResultRecorded.model_validate(json.loads(line)))
        base_s = time.perf_counter() - began
        assert baseline == n
        began = time.perf_counter()
        rebuilt = rebuild_digest(run_dir)
        rebuild_s = time.perf_counter() - began
        began = time.perf_counter()
        loaded = load_current(run_dir)
        load_s = time.perf_counter() - began
        assert loaded is not None and len(loaded) == len(rebuilt) == n
    print(f"journal: {n} results, {size / 1e6:.1f} MB ({size / n:.0f} B/line)")
    print(f"read_run:      {read_s:6.2f} s  {n / read_s:9.0f} results/s")
    print(f"iter_results:  {iter_s:6.2f} s  {n / iter_s:9.0f} results/s")
    print(
        f"streamed json.loads+model_validate baseline: {base_s:6.2f} s  {n / base_s:9.0f} results/s"
    )
    print(f"iter_results speed-up over baseline: {base_s / iter_s:.2f}x")
    print(f"extrapolated for 1,000,000 results: iter_results {iter_s * 1e6 / n:.0f} s")
    print(f"digest rebuilt from the journal: {rebuild_s:6.2f} s ({rebuild_s / iter_s:.2f}x "
          "iter_results)")  # fmt: skip
    print(f"digest loaded:                   {load_s:6.3f} s  {n / load_s:9.0f} results/s "
          f"({iter_s / load_s:.0f}x faster than iter_results, the peer)")


if __name__ == "__main__":
    main()
