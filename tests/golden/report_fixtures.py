"""Deterministic evidence for the report golden files: one matrix with every state, one run.

Nothing here sets a state. The gate results (fixture_results) are recorded with the real
evidence store into a scratch directory, and every row's state, reasons and evidence come from
the real compiler run over that store against the matrix definition (fixture_matrix). Built in
code (not loaded from disk) so a domain-model change shows up as a type error here first, and
every timestamp and id is fixed so renders are byte-stable.
"""

import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from omniqual.compile.collect import collect_results
from omniqual.compile.matrix import compile_matrix
from omniqual.compile.recommend import recommend_matrix
from omniqual.domain.matrix import CompiledMatrix, LoadedMatrix
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.result import GateResult
from omniqual.domain.rules import CurrentGate
from omniqual.domain.run import EnvironmentFingerprint, GpuInfo, RunSummary
from omniqual.evidence.run_reader import read_run
from omniqual.evidence.store import RunWriter
from omniqual.report.run_views import RunEvidence
from tests.golden import fixture_results, fixture_skill_rules
from tests.golden.big_fixture import BIG_ROWS, record_big
from tests.golden.fixture_matrix import (
    AXES,
    BASE,
    CACHE,
    GATES,
    LATER_SPECS,
    PROVENANCE,
    loaded_matrix,
    row_key,
)

# Re-exported: other tests patch or read them here.
__all__ = ["AXES", "BASE", "BIG_ROWS", "PROVENANCE", "row_key"]

T0 = datetime(2025, 3, 4, 12, 0, 0, tzinfo=UTC)
RUN = "run-20250304-a"
LATER_RUN = "run-20250305-a"
COMMAND = ("omniqual", "run", "matrices/flux-wan-h200", "--runner", "runners/h200.yaml")
ENVIRONMENT = EnvironmentFingerprint(
    hostname_hash="d" * 64, os="Linux", kernel="6.8.0", machine="x86_64",
    cpu_model="AMD EPYC 9654", cpu_count=192, memory_total_bytes=2 * 1024**4,
    gpus=(GpuInfo(index=0, name="NVIDIA H200", memory_total_bytes=141 * 1024**3,
                  driver="560.35"),),
    python="3.11.9", packages={"vllm": "0.30.0", "vllm-omni": "0.30.0", "torch": "2.13.0"},
    omniqual_version="0.1.0", git_commit="feedbeef", git_dirty=False,
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Recorded:
    """A fixture's evidence store, the matrix definition and what the compiler made of them."""

    root: Path
    """Holds ``runs/``; links in the compiled matrix are relative to it."""
    loaded: LoadedMatrix
    gates: dict[str, CurrentGate]
    compiled: CompiledMatrix

    @property
    def evidence(self) -> Path:
        return self.root / "runs"


# Stores in memory where the host has one: the store fsyncs every record.
_SCRATCH = tempfile.TemporaryDirectory(
    prefix="omniqual-golden-", dir="/dev/shm" if Path("/dev/shm").is_dir() else None
)
_CACHE: dict[tuple[object, ...], Recorded] = {}


def _fresh_root(name: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=_SCRATCH.name))


def compiled(root: Path, loaded: LoadedMatrix, gates: dict[str, CurrentGate],
             at: datetime) -> CompiledMatrix:  # fmt: skip
    """The real compile over every run under ``root/runs``."""
    located = collect_results([root / "runs"], relative_to=root)
    return compile_matrix(loaded, gates, located, evidence_dirs=(Path("runs"),), now=at)


def _record_main(root: Path) -> None:
    with RunWriter.create(root / "runs", command=COMMAND, environment=ENVIRONMENT,
                          run_id=RUN) as writer:  # fmt: skip
        for result in fixture_results.results(writer, PROVENANCE, T0):
            writer.record(result)


def recorded() -> Recorded:
    """The golden run, recorded and compiled (once per BASE and PROVENANCE, which a test may
    patch)."""
    key = ("main", tuple(BASE.items()), PROVENANCE)
    if key not in _CACHE:
        root = _fresh_root("main")
        _record_main(root)
        loaded = loaded_matrix()
        _CACHE[key] = Recorded(root, loaded, GATES, compiled(root, loaded, GATES, T0))
    return _CACHE[key]


def recorded_later() -> Recorded:
    """A day later: the cache row's parity gate passed in a second run, the Wan row was
    dropped from the matrix and a TeaCache FP8 row added."""
    key = ("later", tuple(BASE.items()), PROVENANCE)
    if key not in _CACHE:
        root = _fresh_root("later")
        _record_main(root)
        later = T0 + timedelta(days=1)
        with RunWriter.create(root / "runs", command=COMMAND, environment=ENVIRONMENT,
                              run_id=LATER_RUN) as writer:  # fmt: skip
            result = fixture_results.make_result(writer, PROVENANCE, later)
            put = fixture_results.putter(writer)
            image = put("cache-seed7.png", "output-image")
            writer.record(result(10, "cache-parity", "candidate_parity", CACHE,
                                 outcome=GateOutcome.PASSED, artifacts=(image,)))  # fmt: skip
        loaded = loaded_matrix(LATER_SPECS)
        _CACHE[key] = Recorded(root, loaded, GATES, compiled(root, loaded, GATES, later))
    return _CACHE[key]


def recorded_big() -> Recorded:
    key = ("big", tuple(BASE.items()), PROVENANCE)
    if key not in _CACHE:
        root = _fresh_root("big")
        loaded, gates = record_big(root / "runs", ENVIRONMENT, PROVENANCE, T0)
        _CACHE[key] = Recorded(root, loaded, gates, compiled(root, loaded, gates, T0))
    return _CACHE[key]


def matrix() -> CompiledMatrix:
    return recorded().compiled


def later_matrix() -> CompiledMatrix:
    return recorded_later().compiled


def results() -> tuple[GateResult, ...]:
    """The golden run's results, as the store reads them back."""
    return read_run(recorded().evidence / RUN).results


def run_summary() -> RunSummary:
    # The store stamps the wall clock on a run; the golden run keeps fixed times.
    return RunSummary(
        run_id=RUN,
        started_at=T0 - timedelta(hours=2),
        finished_at=T0 - timedelta(minutes=5),
        status="completed",
        command=COMMAND,
        environment=ENVIRONMENT,
        results=results(),
    )


def run_evidence() -> RunEvidence:
    return RunEvidence(
        title="FLUX.1-dev production evidence: t2i on 1x H200",
        matrix=matrix(),
        runs=(run_summary(),),
        scope="t2i and t2v rows on 1x H200 141GB; Day-0 milestone",
        # Relative paths: links are computed between them, never through this machine's paths.
        artifact_dirs=(Path("evidence") / RUN / "artifacts",),
        report_dir=Path("out"),
        gate_kinds={"cache-parity": "candidate_parity", "load-poisson": "load"},
        gate_tracks={"api-contract": "function", "gpu-probe": "performance"},
        full_report="report.html",
        # The real selection over the compiled rows and the recorded results.
        recommendations=recommend_matrix(
            loaded_matrix(), GATES, ((r, "") for r in results()), compiled=matrix()
        ),
        campaign=fixture_skill_rules.campaign(),
        rules=fixture_skill_rules.catalogue(),
    )


def big_run_evidence() -> RunEvidence:
    """A large matrix (600 rows over models, tasks and variants) with a contract result of 20
    cases on every row: far beyond one PR comment, to test the fit."""
    big = recorded_big()
    (run,) = big.evidence.iterdir()
    return RunEvidence(
        title="A large matrix",
        matrix=big.compiled,
        results=read_run(run).results,
        artifact_dirs=(Path("evidence") / RUN / "artifacts",),
        report_dir=Path("out"),
        full_report="report.html",
    )
