"""Builders for the store tests: a fixed fingerprint and minimal gate results."""

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from omniqual.domain.evidence import Artifact
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.result import GateResult
from omniqual.domain.run import EnvironmentFingerprint
from omniqual.evidence.store import RunWriter


@pytest.fixture
def environment() -> EnvironmentFingerprint:
    return EnvironmentFingerprint(
        hostname_hash="0" * 64,
        os="Linux",
        kernel="6.0",
        machine="x86_64",
        cpu_model="test cpu",
        cpu_count=2,
        memory_total_bytes=1 << 30,
        python="CPython 3.11",
        omniqual_version="0.1.0",
    )


@pytest.fixture
def make_result() -> Callable[..., GateResult]:
    def build(
        run_id: str,
        result_id: str,
        *,
        artifacts: tuple[Artifact, ...] = (),
        outcome: GateOutcome = GateOutcome.PASSED,
        command: tuple[str, ...] = (),
    ) -> GateResult:
        at = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
        return GateResult(
            result_id=result_id,
            run_id=run_id,
            gate_id="api-contract",
            gate_version=1,
            gate_kind="contract",
            row="task=t2i;hardware=cpu",
            outcome=outcome,
            target="http://127.0.0.1:1",
            command=command,
            artifacts=artifacts,
            started_at=at,
            finished_at=at,
        )

    return build


@pytest.fixture
def writer(tmp_path: Path, environment: EnvironmentFingerprint) -> Iterator[RunWriter]:
    created = RunWriter.create(
        tmp_path / "runs", command=("omniqual", "run"), environment=environment, run_id="r1"
    )
    yield created
    created.close()
