"""The regional torch.compile row for real: ``gate run parity`` and ``gate run startup`` against
``--target sd3-tiny-compile`` (vLLM-Omni 0.30 on the CPU platform, inductor allowed by the recipe,
its caches off so each launch compiles cold). Parity holds the compiled server to its eager
parent: its outputs move (the compiled kernels ran) and stay within the compiled-kernel bound,
and the log shows the DiT's blocks wrapped. The start-up gate holds it to compiling in the
start-up warm-up: the first request after ready is as quick as a warm one. Compiled from that
evidence, the row waits only for its parent's correctness gate, which this test does not run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omniqual.cli.main import app
from omniqual.domain.outcomes import GateOutcome
from omniqual.engine.single_gate import run_single_gate
from tests.integration.embedded.embedded_server import EMBEDDED_MARKS

ROOT = Path(__file__).resolve().parents[3]
# parity's track (accuracy) and the start-up gate's (reliability): the row needs both.
pytestmark = [*EMBEDDED_MARKS, pytest.mark.accuracy, pytest.mark.alone]
ROW = "execution=serial/1+compile"


def run(gate: str, evidence: Path) -> dict[str, object]:
    (result,) = asyncio.run(
        run_single_gate(
            gate, "sd3-tiny-compile", ROW, matrix=ROOT / "matrices" / "embedded-cpu.yaml",
            evidence_root=evidence, command=("omniqual", "gate", "run", gate),
        )
    )  # fmt: skip
    print(gate, result.outcome.value, result.reasons)
    assert result.outcome is GateOutcome.PASSED, result.reasons
    assert "execution=serial/1+compile" in result.row
    return {"figures": {m.name: m.value for m in result.measurements}, **result.effective}


def test_compiled_sd3_is_at_parity_and_compiles_during_start_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    parity = run("parity", tmp_path)
    detail = parity["parity"]
    assert isinstance(detail, dict) and detail["tolerance"] == "compiled"
    signals = {s["source"]: s for s in detail["signals"]}
    assert signals["output"]["active"], signals  # the compiled kernels ran: outputs moved
    assert "regionally compiled modules = 2" in signals["log"]["detail"]
    figures = parity["figures"]
    assert isinstance(figures, dict) and figures["outputs_identical"] == 0
    assert 30.0 <= figures["worst_psnr"] < 60.0

    startup = run("startup", tmp_path)
    ratio, ready = startup["first_to_warm_ratio"], startup["time_to_ready_s"]
    assert isinstance(ratio, float) and isinstance(ready, float)
    assert ratio <= 3.0  # the warm-up compiled; the first request did not

    out = tmp_path / "compiled.json"
    code = CliRunner().invoke(app, ["matrix", "compile", "matrices/embedded-cpu.yaml", "-e",
                                    str(tmp_path), "-o", str(out)])  # fmt: skip
    assert code.exit_code == 0, code.output
    rows = {r["key"]: r for r in json.loads(out.read_text())["rows"]}
    (row,) = [r for k, r in rows.items() if "execution=serial/1+compile" in k]
    assert row["gate_outcomes"] == {"parity": "passed", "startup": "passed"}
    assert row["state"] == "not tested"
    assert "reference-parity" in row["reasons"][0], row["reasons"]  # the parent's, only
