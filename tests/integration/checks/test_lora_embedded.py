"""Gate ``lora`` for real, through the engine, on the SD3 LoRA row of the embedded target (the
baseline's server, requests naming an adapter)
(vLLM-Omni 0.30 on CPU, bundled sd3-tiny) with the bundled adapters written beside its
checkpoint. vLLM-Omni applies a per-request adapter on CPU as it should: each adapter moves the
output, reproduces, gives the base output at scale 0 and after another adapter took its one
slot its own output again, turn after turn, its memory flat; nothing stays applied; a nameless
adapter, a scale that is not a number and an int_id below 1 are refused with 400. An adapter path
that does not exist ("Image generation failed: [Errno 2] No such file or directory"), one whose
target modules match no layer and one whose weights are not safetensors are answered 500, which
the SD3 contract declares as 0.30's deviations: the gate passes with those limitations, and the
server log shows each adapter loaded and activated."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from omniqual.domain.outcomes import GateOutcome
from omniqual.engine.single_gate import run_single_gate
from tests.integration.embedded.embedded_server import EMBEDDED_MARKS

ROOT = Path(__file__).resolve().parents[3]
pytestmark = EMBEDDED_MARKS
ROW = "model=sd3-tiny,api_mode=images-generations,topology=1-device,adapter=request-lora"


@pytest.mark.parametrize(
    ("recipe", "execution"),
    [("sd3-tiny", "serial/1"), ("sd3-tiny-batch2", "request-batch/2+50ms")],
)
def test_per_request_lora_on_sd3_passes_with_the_declared_500s(
    recipe: str, execution: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the baseline's server and on the request-batch server, where the adapter requests
    sent together may share a batch: the same verdict."""
    monkeypatch.chdir(ROOT)
    (result,) = asyncio.run(
        run_single_gate(
            "lora", recipe, f"{ROW},execution={execution}",
            matrix=ROOT / "matrices" / "embedded-cpu.yaml", evidence_root=tmp_path,
            command=("omniqual", "gate", "run", "lora", "--target", recipe),
        )
    )  # fmt: skip
    for case in result.cases:
        print(f"{case.id}: {case.outcome.value}: {case.observed_status}")
    assert result.outcome is GateOutcome.PASSED, result.reasons
    assert {a.role for a in result.artifacts} >= {"contract", "lora-output"}  # its evidence
    # vLLM-Omni 0.30 answers 500 for an adapter path that does not exist, one that matches no
    # layer (refused, not served without its weights) and one whose weights are not
    # safetensors: the contract declares each, so they are the row's limitations.
    declared = ("missing-path", "no-layer", "malformed")
    limited = sorted(limitation.split(": ")[1] for limitation in result.limitations)
    assert limited == sorted(f"images-generations/lora/{name}" for name in declared)
    assert result.effective["refusals_not_sent"] == []
    outcomes = {case.id.rsplit("/lora/", 1)[1]: case for case in result.cases}
    for name in declared:
        case = outcomes.pop(name)
        assert case.deviation and "HTTP 500" in case.observed_status, case
    for name in ("no-name", "bad-scale", "bad-int-id"):
        assert outcomes[name].observed_status.startswith("HTTP 400"), outcomes[name]
    assert all(case.outcome is GateOutcome.PASSED for case in outcomes.values()), outcomes
    # Each adapter moved the 64x64 output far beyond the (exact) same-seed spread.
    psnr = {m.name: m.value for m in result.measurements if m.unit == "dB"}
    assert psnr["omniqual-a vs no adapter: psnr"] < 30
    assert psnr["omniqual-b vs omniqual-a: psnr"] < 30
    # Four turns of the two adapters: eight loads of the one slot, each its first output, the
    # server's memory (its process tree, launched here) within the bound over them.
    figures = {m.name: m.value for m in result.measurements}
    print("churn memory growth", figures["churn_memory_growth"], "MiB")
    assert figures["churn_adapter_loads"] == 8
    assert {f"churn-{turn}/{name}" for turn in range(1, 5) for name in ("omniqual-a", "omniqual-b")
            } | {"churn-memory"} <= set(outcomes)  # fmt: skip
    assert result.effective["memory_source"] == "process-tree"
    # The server's log shows the adapters loaded, the one slot churned, scale 0 switching off.
    log = next(p for p in (tmp_path.glob(f"*/logs/{recipe}.log")))
    text = log.read_text(errors="replace")
    assert re.search(r"Loaded LoRA model: id=\d+, num_modules=12", text)
    assert "Evicting LRU adapter" in text
    assert "Received a request with LoRA scale 0; deactivating all LoRA adapters" in text
