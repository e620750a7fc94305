"""Builders for recommendation tests: a small matrix definition, its gates' current specs, and
gate results recorded on named deployments (checkpoint, serve config, served identity), so the
real compile derives every row's state and ``recommend`` reads it."""

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

from omniqual.domain.axes import AxisCatalog
from omniqual.domain.evidence import Artifact, Measurement
from omniqual.domain.matrix import LoadedMatrix, MatrixDefinition, PlannedRow, RowSpec
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.provenance import Provenance
from omniqual.domain.result import GateResult
from omniqual.domain.rules import CurrentGate

T0 = datetime(2026, 2, 1, tzinfo=UTC)
AXES = ("model", "quantization", "hardware")
BASE = {"model": "sd3", "quantization": "bf16", "hardware": "cpu"}
SPEC = "5" * 64
KINDS = {
    "reference-parity": "reference_parity", "parity": "candidate_parity",
    "isolation": "isolation", "abort": "abort", "fault-injection": "fault_injection",
    "perf": "perf", "perf-url": "perf", "soak": "soak", "offload-sweep": "offload_sweep",
    "api-contract": "api_contract", "strict-load": "strict_load",
}  # fmt: skip
GATES: dict[str, CurrentGate] = {gate: CurrentGate(1, SPEC) for gate in KINDS}
DOD = ("isolation", "abort", "fault-injection", "perf", "soak")
"""What a recommended deployment passes beside its correctness gate."""
BASELINE_GATES = ("reference-parity", *DOD)
CANDIDATE_GATES = ("parity", *DOD)

A = Provenance(checkpoint_sha256="a" * 64, serve_config_sha256="1" * 64,
               vllm_omni_version="0.30.0")  # fmt: skip
"""One launched deployment."""
B = Provenance(checkpoint_sha256="a" * 64, serve_config_sha256="2" * 64,
               vllm_omni_version="0.30.0")  # fmt: skip
"""The same checkpoint under another serve config: another deployment."""
URL_1 = Provenance(served_identity_sha256="7" * 64, source="url")
URL_2 = Provenance(served_identity_sha256="8" * 64, source="url")
"""Two servers reached by URL: what each showed of itself differs."""


def catalog() -> AxisCatalog:
    return AxisCatalog.model_validate(
        {"axes": [{"name": a, "description": a, "open_ended": True} for a in AXES]}
    )


def key(**changes: str) -> str:
    return str(catalog().row_key({**BASE, **changes}))


def matrix(*rows: tuple[Mapping[str, str], RowSpec]) -> LoadedMatrix:
    axes = catalog()
    planned = tuple(PlannedRow(axes.row_key({**BASE, **c}), spec, None) for c, spec in rows)
    definition = MatrixDefinition(name="m", title="m")
    return LoadedMatrix(definition, axes, planned, Path("m.yaml"))


class Recorder:
    """Results with increasing times and distinct ids, in the order they are made."""

    def __init__(self) -> None:
        self.results: list[GateResult] = []

    def __call__(
        self, row: str, gate: str, outcome: GateOutcome = GateOutcome.PASSED, *,
        at: Provenance = A, version: int = 1, spec: str | None = SPEC,
        limitations: tuple[str, ...] = (), **measured: float,
    ) -> GateResult:  # fmt: skip
        n = len(self.results)
        made = GateResult(
            result_id=f"r{n:03d}-{gate}", run_id="run-1", gate_id=gate, gate_version=version,
            gate_kind=KINDS[gate], gate_spec_sha256=spec, row=row, outcome=outcome,
            limitations=limitations, target="recipe", provenance=at,
            measurements=tuple(Measurement(name=k.replace("__", "."), value=v, unit="x")
                               for k, v in measured.items()),
            artifacts=(Artifact(sha256=f"{n:064x}", size=1, media_type="text/plain",
                                role="log", name=gate),),
            started_at=T0 + timedelta(minutes=n), finished_at=T0 + timedelta(minutes=n),
        )  # fmt: skip
        self.results.append(made)
        return made

    def passes(self, row: str, gates: tuple[str, ...], *, at: Provenance = A,
               latency: float = 0.5, qps: float = 2.0, mib: float = 1000.0) -> None:  # fmt: skip
        """Every gate passed on one deployment; perf measured the three objectives."""
        for gate in gates:
            if gate == "perf":
                self(row, gate, at=at, latency_mean=latency, throughput_qps=qps,
                     peak_memory_mb_max=mib)  # fmt: skip
            else:
                self(row, gate, at=at)
