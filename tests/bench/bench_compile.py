"""Benchmark: compile a 100,000-row matrix against 1,000,000 recorded results, then render it.

Run: ``.venv/bin/python tests/bench/bench_compile.py [--rows N] [--results M]``.
Journals are written in bulk (no per-record fsync: the bench measures reading and compiling, not
the durable writer). Peak memory is the process's max RSS (ru_maxrss); the named peer is a plain
``json.loads`` pass over the same journals, so the ratio says what validation and the rule table
cost on top of merely reading the bytes.
"""

import argparse
import json
import resource
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
from omniqual.domain.matrix import MatrixDefinition, RowSpec  # noqa: E402
from omniqual.domain.outcomes import GateOutcome  # noqa: E402
from omniqual.domain.provenance import Provenance  # noqa: E402
from omniqual.domain.result import GateResult  # noqa: E402
from omniqual.domain.rules import CurrentGate  # noqa: E402
from omniqual.domain.run import ResultRecorded, RunStarted  # noqa: E402
from omniqual.engine.compile import compile_matrix  # noqa: E402
from omniqual.engine.journal import encode_record  # noqa: E402
from omniqual.engine.matrix_service import collect_results  # noqa: E402
from omniqual.report.render import render_matrix  # noqa: E402
from omniqual.specs.matrix import LoadedMatrix, PlannedRow  # noqa: E402
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
                written += 1
        run_index += 1


def max_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--results", type=int, default=1_000_000)
    args = parser.parse_args()
    cat = catalog()
    matrix = planned(args.rows, cat)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t = time.perf_counter()
        write_runs(root, matrix, args.results, per_run=100_000)
        gen_s = time.perf_counter() - t
        rss_before = max_rss_mib()

        t = time.perf_counter()
        lines = 0
        for journal in sorted(root.glob("*/journal.jsonl")):
            with open(journal, "rb") as handle:
                for line in handle:
                    json.loads(line)
                    lines += 1
        peer_s = time.perf_counter() - t

        t = time.perf_counter()
        compiled = compile_matrix(
            matrix, dict.fromkeys(GATES, CurrentGate(1, SPEC)), collect_results([root], root),
            now=T0,
        )
        compile_s = time.perf_counter() - t
        rss_after = max_rss_mib()

        t = time.perf_counter()
        html = render_matrix(compiled, "html")
        render_s = time.perf_counter() - t
    counts = {s.value: n for s, n in compiled.counts().items()}
    print(f"rows={args.rows} results={args.results} journal lines={lines}")
    print(f"generate journals       {gen_s:8.2f} s (not part of the measurement)")
    print(f"peer: json.loads only   {peer_s:8.2f} s")
    print(f"read+compile            {compile_s:8.2f} s  ({compile_s / peer_s:.2f}x the peer)")
    print(f"render html             {render_s:8.2f} s  ({len(html) / 1e6:.1f} MB)")
    print(f"peak RSS                {rss_after:8.0f} MiB (before compile {rss_before:.0f} MiB)")
    print(f"states                  {counts}")


if __name__ == "__main__":
    main()
