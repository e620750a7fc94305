"""vLLM-Omni's prompt-embedding cache for real (``--target sd3-tiny-prompt-embed-cache``: the
SD3 tiny pipeline on the CPU platform with ``OMNI_DIFFUSION_PROMPT_EMBED_CACHE=1``), a cache
that crosses requests. Parity holds it to its eager baseline's exact outputs (the request set
repeats each prompt under two seeds, so the second is a hit) and passes as a limitation only,
since 0.30 shows none of its hits; isolation and field-effect hold it to what a cross-request
cache can break: different prompts together and interleaved each get their own output, and a
field on the prompt side still acts when the prompt repeats. Compiled from that evidence, the
row waits only for its parent's correctness gate, which this test does not run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omniqual.cli.main import app
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.result import GateResult
from omniqual.engine.single_gate import run_single_gate
from tests.integration.embedded.embedded_server import EMBEDDED_MARKS

ROOT = Path(__file__).resolve().parents[3]
# isolation and field-effect are function-track gates; parity (accuracy) runs here beside them.
pytestmark = [*EMBEDDED_MARKS, pytest.mark.function]
ROW = "model=sd3-tiny,api_mode=images-generations,cache_policy=prompt-embed"


def run(gate: str, evidence: Path) -> GateResult:
    (result,) = asyncio.run(
        run_single_gate(
            gate, "sd3-tiny-prompt-embed-cache", ROW,
            matrix=ROOT / "matrices" / "embedded-cpu.yaml", evidence_root=evidence,
            command=("omniqual", "gate", "run", gate),
        )
    )  # fmt: skip
    print(gate, result.outcome.value, result.reasons, result.limitations)
    assert "cache_policy=prompt-embed" in result.row
    return result


def test_the_prompt_embedding_cache_is_exact_isolated_and_leaves_fields_acting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    parity = run("parity", tmp_path)
    assert parity.outcome is GateOutcome.PASSED, parity.reasons
    (limitation,) = parity.limitations
    assert limitation.startswith("cache_policy=prompt-embed: activity not provable")
    assert "prompt-embedding cache installations = 1" in limitation
    figures = {m.name: m.value for m in parity.measurements}
    assert figures["outputs_identical"] == figures["outputs_compared"] >= 6

    isolation = run("isolation", tmp_path)
    assert isolation.outcome is GateOutcome.PASSED, isolation.reasons

    effect = run("field-effect", tmp_path)
    assert effect.outcome is GateOutcome.PASSED, effect.reasons
    acted = {c.id for c in effect.cases if c.outcome is GateOutcome.PASSED}
    assert "images-generations/effect/negative_prompt" in acted, sorted(acted)

    out = tmp_path / "compiled.json"
    code = CliRunner().invoke(app, ["matrix", "compile", "matrices/embedded-cpu.yaml", "-e",
                                    str(tmp_path), "-o", str(out)])  # fmt: skip
    assert code.exit_code == 0, code.output
    (row,) = [r for r in json.loads(out.read_text())["rows"]
              if "cache_policy=prompt-embed" in r["key"]]  # fmt: skip
    assert row["gate_outcomes"] == {"field-effect": "passed", "isolation": "passed",
                                    "parity": "passed"}  # fmt: skip
    assert row["state"] == "not tested"
    assert "reference-parity" in row["reasons"][0], row["reasons"]  # the parent's, only
