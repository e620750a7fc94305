"""Fixtures for the api_contract check tests: the fake server behind an in-process transport,
an in-memory artifact sink, and a runner that builds the CheckContext by hand."""

from __future__ import annotations

import asyncio
import hashlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

_ROOT = str(Path(__file__).resolve().parents[4])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from omniqual.checks.api_contract import ApiContractCheck, ApiContractParams  # noqa: E402
from omniqual.checks.base import CheckContext, CheckOutcome, TargetInfo  # noqa: E402
from omniqual.client import OmniClient  # noqa: E402
from omniqual.domain.axes import RowKey  # noqa: E402
from omniqual.domain.evidence import Artifact  # noqa: E402
from omniqual.domain.gate import GateSpec  # noqa: E402
from tests.fakes import FakeConfig, FakeOmni  # noqa: E402

CONTRACTS = Path(__file__).parent / "contracts"


@dataclass
class MemorySink:
    stored: dict[str, bytes] = field(default_factory=dict)
    artifacts: list[Artifact] = field(default_factory=list)

    def put_artifact(
        self, data: bytes | Path, *, media_type: str, role: str, name: str
    ) -> Artifact:
        raw = data.read_bytes() if isinstance(data, Path) else data
        digest = hashlib.sha256(raw).hexdigest()
        self.stored[role] = raw
        artifact = Artifact(
            sha256=digest, size=len(raw), media_type=media_type, role=role, name=name
        )
        self.artifacts.append(artifact)
        return artifact


@dataclass
class GateRun:
    outcome: CheckOutcome
    sink: MemorySink
    progress: list[tuple[str, float | None]]


Runner = Callable[..., GateRun]


def run_gate(
    fake: FakeOmni,
    *,
    row: dict[str, str] | None = None,
    contracts_dir: Path = CONTRACTS,
    log_path: Path | None = None,
    budget_s: float | None = None,
    **params: object,
) -> GateRun:
    sink = MemorySink()
    progress: list[tuple[str, float | None]] = []
    settings = {"release": "0.30.0", "poll_interval_s": 0.02, "job_timeout_s": 10.0, **params}
    parsed = ApiContractParams.model_validate({"contracts_dir": str(contracts_dir), **settings})
    ctx = CheckContext(
        gate=GateSpec(id="api-contract", kind="api_contract", version=1, budget_s=budget_s),
        row=RowKey(tuple((row or {"model": "fake-omni"}).items())),
        target=TargetInfo(url="http://fake.invalid", log_path=log_path),
        artifacts=sink,
        project_root=Path("/nonexistent"),
        make_client=lambda: OmniClient("http://fake.invalid", transport=fake.transport()),
        progress=lambda message, fraction: progress.append((message, fraction)),
    )
    outcome = asyncio.run(ApiContractCheck().run(ctx, parsed))
    return GateRun(outcome, sink, progress)


@pytest.fixture
def temp_dir(tmp_path: Path) -> Path:
    path = tmp_path / "server-tmp"
    path.mkdir()
    return path


@pytest.fixture
def storage_dir(tmp_path: Path) -> Path:
    """Where a ``ServedFake`` stores finished videos (the server's VLLM_OMNI_STORAGE_PATH)."""
    path = tmp_path / "server-storage"
    path.mkdir()
    return path


@pytest.fixture
def fake_config(temp_dir: Path) -> FakeConfig:
    return FakeConfig(
        max_upload_bytes=65536,
        max_side=512,
        temp_dir=temp_dir,
        video_queue_s=0.0,
        video_run_s=0.01,
    )
