"""Benchmark: compile a 100,000-row matrix against 1,000,000 recorded results.

Run: ``.venv/bin/python tests/bench/bench_compile.py [--rows N] [--results M] [--repeat K]``.

Journals are written in bulk (no per-record fsync: the bench measures reading and compiling, not
the durable writer), each with the columnar digest a finished run gets. Every measurement then
runs in a fresh process, so its peak memory (ru_maxrss) is that of one ``matrix compile``
(imports, the planned matrix and the compile), not the generator's. The figure is compile from
the digests (what ``omniqual matrix compile`` does); the named peer, measured in the same run, is
the previous implementation: parsing every journal line with pydantic into the digest view and
bucketing result by result (``compile_matrix`` over ``collect_results``). Both must compile the
same matrix (the sha256 of its JSON is compared). ``--render`` also times the paged HTML.
"""

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from omniqual.domain.axes import AxisCatalog  # noqa: E402
from omniqual.domain.evidence import Artifact  # noqa: E402
from omniqual.domain.matrix import LoadedMatrix, MatrixDefinition, PlannedRow, RowSpec  # noqa: E402
from omniqual.domain.outcomes import GateOutcome  # noqa: E402
from omniqual.domain.provenance import Provenance  # noqa: E402
from omniqual.domain.result import GateResult  # noqa: E402
from omniqual.domain.rules import CurrentGate  # noqa: E402
from omniqual.domain.run import ResultRecorded, RunStarted  # noqa: E402
from omniqual.evidence.journal import encode_record  # noqa: E402
from omniqual.evidence.run_digest import DIGEST_NAME, DigestBuilder, stamp_journal  # noqa: E402
from tests.fakes.evidence import FINGERPRINT  # noqa: E402

GATES = ("api-contract", "strict-load", "abort", "soak")
T0 = datetime(2026, 1, 1, tzinfo=UTC)
SPEC = "5" * 64


def catalog() -> AxisCatalog:
    axes = [
        {"name": "model", "description": "m", "open_ended": True},
        {"name": "shape_schedule", "description": "s", "open_ended": True},
        {"name": "hardware", "description": "h", "open_ended": True},
    ]
    return AxisCatalog.model_validate({"axes": axes})


def planned(n_rows: int, cat: AxisCatalog) -> LoadedMatrix:
    spec = RowSpec(requires=GATES)
    rows = tuple(
        PlannedRow(
            cat.row_key({"model": f"m{i % 100}", "shape_schedule": f"s{i // 100}",
                         "hardware": "cpu"}),
            spec,
            None,
        )
        for i in range(n_rows)
    )  # fmt: skip
    definition = MatrixDefinition(name="bench")
    return LoadedMatrix(definition, cat, rows, Path("bench.yaml"))


def write_runs(root: Path, matrix: LoadedMatrix, n_results: int, per_run: int) -> None:
    keys = [str(r.key) for r in matrix.rows]
    artifact = Artifact(sha256="a" * 64, size=10, media_type="text/plain", role="log", name="l")
    provenance = Provenance(model="m", checkpoint_sha256="c" * 64, vllm_omni_version="0.30.0")
    written = 0
    run_index = 0
    while written < n_results:
        run_id = f"run-{run_index:04d}"
        run_dir = root / run_id
        run_dir.mkdir(parents=True)
        builder = DigestBuilder()
        with open(run_dir / "journal.jsonl", "wb") as out:
            out.write(encode_record(RunStarted(run_id=run_id, at=T0, command=("bench",),
                                               environment=FINGERPRINT)))  # fmt: skip
            for _ in range(min(per_run, n_results - written)):
                i = written
                outcome = GateOutcome.FAILED if i % 17 == 0 else GateOutcome.PASSED
                at = T0 + timedelta(seconds=i)
                result = GateResult(
                    result_id=uuid.UUID(int=i).hex, run_id=run_id, gate_id=GATES[i % 4],
                    gate_version=1, gate_kind="bench", gate_spec_sha256=SPEC,
                    row=keys[(i // 4) % len(keys)],
                    outcome=outcome, reasons=("r",) if outcome is GateOutcome.FAILED else (),
                    target="bench", artifacts=(artifact,), provenance=provenance,
                    started_at=at, finished_at=at,
                )  # fmt: skip
                out.write(encode_record(ResultRecorded(result=result)))
                builder.add(result)
                written += 1
        digest = builder.build(stamp_journal(run_dir / "journal.jsonl"))
        (run_dir / DIGEST_NAME).write_bytes(digest.save())
        run_index += 1


def max_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(mode: str, root: Path, rows: int, render: bool) -> None:
    """One measurement in this (fresh) process; prints a JSON line."""
    from omniqual.compile.classes import compile_digests
    from omniqual.compile.collect import collect_digests, collect_results
    from omniqual.compile.matrix import compile_matrix

    matrix = planned(rows, catalog())
    gates = dict.fromkeys(GATES, CurrentGate(1, SPEC))
    before = max_rss_mib()
    began, cpu_began = time.perf_counter(), time.process_time()
    if mode == "digest":
        compiled = compile_digests(matrix, gates, collect_digests([root], root), now=T0)
    else:
        compiled = compile_matrix(matrix, gates, collect_results([root], root), now=T0)
    seconds, cpu = time.perf_counter() - began, time.process_time() - cpu_began
    peak = max_rss_mib()
    figures = {
        "mode": mode,
        "seconds": seconds,
        "cpu_s": cpu,
        "peak_mib": peak,
        "before_mib": before,
        "states": {s.value: n for s, n in compiled.counts().items()},
        "sha256": hashlib.sha256(compiled.model_dump_json().encode()).hexdigest(),
    }
    if render:
        from omniqual.report.matrix_pages import render_matrix_pages

        began = time.perf_counter()
        pages = render_matrix_pages(compiled, "matrix")
        figures["render_s"] = time.perf_counter() - began
        figures["summary_mb"] = len(pages[Path("matrix.html")]) / 1e6
        figures["pages"] = len(pages)
        figures["largest_page_mb"] = max(len(p) for p in pages.values()) / 1e6
    print(json.dumps(figures))


def run_measurement(mode: str, root: Path, rows: int, render: bool = False) -> dict[str, object]:
    argv = [sys.executable, __file__, "--measure", mode, "--root", str(root), "--rows", str(rows)]
    done = subprocess.run(argv + (["--render"] if render else []), capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"{mode} measurement failed:\n{done.stderr}")
    out = done.stdout
    figures: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    return figures


def spread(values: list[float]) -> str:
    return f"{min(values):.2f}-{max(values):.2f} (median {statistics.median(values):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--results", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3, help="digest compiles (peer runs once)")
    parser.add_argument("--render", action="store_true", help="also time the paged HTML")
    parser.add_argument("--measure", choices=("digest", "journal"), help=argparse.SUPPRESS)
    parser.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(args.measure, args.root, args.rows, args.render)
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t = time.perf_counter()
        write_runs(root, planned(args.rows, catalog()), args.results, per_run=100_000)
        gen_s = time.perf_counter() - t
        peer = run_measurement("journal", root, args.rows)
        ours = [run_measurement("digest", root, args.rows, args.render and i == 0)
                for i in range(args.repeat)]  # fmt: skip
    seconds = [float(str(m["seconds"])) for m in ours]
    cpus = [float(str(m["cpu_s"])) for m in ours]
    peaks = [float(str(m["peak_mib"])) for m in ours]
    peer_s, peer_cpu = float(str(peer["seconds"])), float(str(peer["cpu_s"]))
    print(f"rows={args.rows} results={args.results} (journals+digests written in {gen_s:.1f} s)")
    print(
        f"peer: journal parse + per-result compile (the previous implementation): {peer_s:.2f} s "
        f"wall, {peer_cpu:.2f} s CPU, peak {peer['peak_mib']:.0f} MiB"
    )
    print(
        f"compile from digests, {len(ours)} runs: wall {spread(seconds)} s, CPU {spread(cpus)} s,"
        f" peak {spread(peaks)} MiB (before compile {ours[0]['before_mib']:.0f} MiB)"
    )
    print(
        f"ratio to the peer (medians): {statistics.median(seconds) / peer_s:.3f}x the wall time, "
        f"{statistics.median(cpus) / peer_cpu:.3f}x the CPU time, "
        f"{statistics.median(peaks) / float(str(peer['peak_mib'])):.2f}x the peak"
    )
    load = os.getloadavg()[0]
    print(f"load average at the end: {load:.1f} on {os.cpu_count()} CPUs (wall time is shared)")
    same = all(m["sha256"] == peer["sha256"] for m in ours)
    print(f"same compiled matrix as the peer: {same}; states {ours[0]['states']}")
    if args.render:
        r = ours[0]
        print(
            f"render paged html: {r['render_s']:.2f} s, summary {r['summary_mb']:.2f} MB, "
            f"{r['pages']} pages, largest {r['largest_page_mb']:.2f} MB"
        )
    if not same:
        sys.exit("the digest compile disagrees with the journal compile")


if __name__ == "__main__":
    main()
