"""Every result is held to what its server's log says it resolved: a gate that passed (or
failed) on a server whose log resolved another attention backend than the row declares is
`invalid`, naming the role and the backend; where the log agrees, or there is none, the verdict
stands and what the log showed is recorded with the result."""

import asyncio
from pathlib import Path

import pytest

from omniqual.checks import registry
from omniqual.checks.base import TargetInfo
from omniqual.domain.axes import RowKey, Selector
from omniqual.domain.gate import GateSpec
from omniqual.domain.log_proof import LogProof
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.result import GateResult
from omniqual.engine.run.gate_runner import GateJob, run_gate
from omniqual.evidence.store import RunWriter
from omniqual.specs.gates import LoadedGate
from tests.fakes.evidence import FINGERPRINT, LAUNCHED

PATTERN = "Resolved diffusion attention backend '(?P<name>[^']+)' for role='(?P<part>[^']+)'"
SDPA = LogProof("attention_backend", "sdpa", PATTERN, ("SDPA", "CPU_SDPA"))
ROW = RowKey((("model", "m"), ("attention_backend", "sdpa")))


def _line(backend: str, role: str) -> str:
    return (f"INFO [selector.py:93] Resolved diffusion attention backend '{backend}' for "
            f"role='{role}' via platform default\n")  # fmt: skip


def _run(tmp_path: Path, log: str | None, outcome: str = "passed") -> GateResult:
    log_path = None
    if log is not None:
        log_path = tmp_path / "server.log"
        log_path.write_text(log)
    spec = GateSpec(id="g", kind="scripted", version=1, params={"outcome": outcome})
    gate = LoadedGate(spec, tmp_path / "g.yaml", "0" * 64, Selector.parse(""))
    target = TargetInfo(url="http://fake.invalid", log_path=log_path, label="t")
    writer = RunWriter.create(tmp_path / "runs", command=("t",), environment=FINGERPRINT)
    job = GateJob(gate, ROW, target, LAUNCHED, log_proofs=(SDPA,))
    return asyncio.run(run_gate(job, writer, project_root=tmp_path, command=("t",)))


@pytest.fixture(autouse=True)
def _scripted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.BUILTIN, "scripted", "tests.fakes.checks:ScriptedCheck")


@pytest.mark.parametrize("outcome", ["passed", "failed"])
def test_a_server_that_resolved_another_backend_makes_the_verdict_invalid(
    tmp_path: Path, outcome: str
) -> None:
    result = _run(tmp_path, _line("CPU_SDPA", "self") + _line("SAGE_ATTN", "cross"), outcome)
    assert result.outcome is GateOutcome.INVALID
    reason = result.reasons[0]
    assert reason.startswith("attention_backend_not_served:") and "SAGE_ATTN for 'cross'" in reason
    assert result.reasons[1] == f"the check itself said {outcome}"
    served = result.effective["served_as"]
    assert served == {"attention_backend": {"declared": "sdpa", "served_as": ["SDPA", "CPU_SDPA"],
                      "resolved": {"self": "CPU_SDPA", "cross": "SAGE_ATTN"}}}  # fmt: skip


def test_a_log_that_agrees_leaves_the_verdict_and_records_the_backend(tmp_path: Path) -> None:
    result = _run(tmp_path, "boot\n" + _line("CPU_SDPA", "self"))
    assert result.outcome is GateOutcome.PASSED, result.reasons
    served = result.effective["served_as"]
    assert isinstance(served, dict)
    assert served["attention_backend"]["resolved"] == {"self": "CPU_SDPA"}  # type: ignore[index]


def test_without_a_captured_log_nothing_is_proven_and_it_says_so(tmp_path: Path) -> None:
    result = _run(tmp_path, None)
    assert result.outcome is GateOutcome.PASSED
    served = result.effective["served_as"]
    assert served == {"attention_backend": {"declared": "sdpa",
                                            "resolved": "not checked: no server log"}}  # fmt: skip


def test_a_verdict_that_decided_nothing_is_left_as_it_is(tmp_path: Path) -> None:
    result = _run(tmp_path, _line("FLASH_ATTN", "self"), "invalid")
    assert result.outcome is GateOutcome.INVALID and result.reasons == ()
    assert "FLASH_ATTN" in str(result.effective["served_as"])  # still recorded
