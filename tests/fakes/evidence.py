"""Build recorded evidence for tests: run directories holding gate results with artifacts."""

import uuid
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.provenance import Provenance
from omniqual.domain.result import GateResult
from omniqual.domain.run import EnvironmentFingerprint
from omniqual.evidence.store import RunWriter

T0 = datetime(2026, 1, 1, tzinfo=UTC)

FINGERPRINT = EnvironmentFingerprint(
    hostname_hash="0" * 64, os="Linux", kernel="6.0", machine="x86_64", cpu_model="test",
    cpu_count=2, memory_total_bytes=1 << 34, python="CPython 3.11", omniqual_version="0.1.0",
)  # fmt: skip

LAUNCHED = Provenance(vllm_omni_version="0.30.0", serve_config_sha256="5" * 64, source="launched")
"""A launch's provenance: its serve config names the deployment, so its results combine."""


def result(
    writer: RunWriter,
    gate: str,
    row: str,
    outcome: GateOutcome = GateOutcome.PASSED,
    *,
    minute: int = 0,
    with_artifact: bool = True,
    reasons: tuple[str, ...] = (),
    provenance: Provenance | None = None,
) -> GateResult:
    artifacts = ()
    if with_artifact:
        artifacts = (
            writer.put_artifact(
                f"{gate} {row} {minute}".encode(), media_type="text/plain", role="log", name=gate
            ),
        )
    return GateResult(
        result_id=uuid.uuid4().hex, run_id=writer.run_id, gate_id=gate, gate_version=1,
        gate_kind="test", row=row, outcome=outcome, reasons=reasons, target="test",
        artifacts=artifacts, provenance=provenance or LAUNCHED,
        started_at=T0 + timedelta(minutes=minute), finished_at=T0 + timedelta(minutes=minute),
    )  # fmt: skip


def record_run(
    root: Path, specs: Iterable[tuple[str, str, GateOutcome]], *, start_minute: int = 0
) -> Path:
    """One finished run under ``root`` holding a passing-or-not result per (gate, row, outcome)."""
    writer = RunWriter.create(root, command=("omniqual", "test"), environment=FINGERPRINT)
    with writer:
        for minute, (gate, row, outcome) in enumerate(specs):
            writer.record(result(writer, gate, row, outcome, minute=start_minute + minute))
    return writer.run_dir
