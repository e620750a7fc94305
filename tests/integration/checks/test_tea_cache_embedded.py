"""TeaCache where vLLM-Omni 0.30 accepts it: ``gate run parity --target qwen-image-tiny-tea-cache``
(the Qwen-Image tiny pipeline on the CPU platform with ``--cache-backend tea_cache``; 0.30 has
TeaCache coefficients for QwenImageTransformer2DModel, unlike SD3's, whose refusal
test_cache_backends_embedded pins). At the fast path's 8 steps TeaCache skips steps: every
output moves beyond the baseline's own spread (its second pass is identical) and stays within
the lossy cache bound, so the gate passes, shown at work by its outputs; TeaCache's own log line
only says it was switched on. On the Stable Audio tiny pipeline, which 0.30 also has
coefficients and an extractor for, TeaCache is switched on and changes nothing: every output is
bit-identical to the dense one (here at 8, 30 and 100 steps), so parity fails it as a silent
fallback."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.result import GateResult
from omniqual.engine.single_gate import run_single_gate
from tests.integration.embedded.embedded_server import EMBEDDED_MARKS

ROOT = Path(__file__).resolve().parents[3]
# parity is an accuracy-track gate (gates/parity.yaml).
pytestmark = [*EMBEDDED_MARKS, pytest.mark.accuracy]


def parity_on(target: str, row: str, evidence: Path) -> GateResult:
    (result,) = asyncio.run(
        run_single_gate(
            "parity", target, row, matrix=ROOT / "matrices" / "embedded-cpu.yaml",
            evidence_root=evidence,
            command=("omniqual", "gate", "run", "parity", "--target", target),
        )
    )  # fmt: skip
    print(result.outcome.value, result.reasons)
    return result


def test_tea_cache_on_qwen_image_passes_parity_shown_by_its_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    result = parity_on("qwen-image-tiny-tea-cache", "model=qwen-image-tiny,cache_policy=tea_cache",
                       tmp_path)  # fmt: skip
    figures = {m.name: m.value for m in result.measurements}
    assert result.outcome is GateOutcome.PASSED, result.reasons
    assert result.limitations == ()
    parity = result.effective["parity"]
    assert isinstance(parity, dict) and parity["tolerance"] == "cache"
    signals = {s["source"]: s for s in parity["signals"]}
    assert signals["output"]["active"] and "6 of 6 outputs differ" in signals["output"]["detail"]
    assert "TeaCache enablement lines = 1" in signals["log"]["detail"]
    assert figures["outputs_identical"] == 0 and 30.0 <= figures["worst_psnr"] < 80.0


def test_tea_cache_on_stable_audio_changes_nothing_and_fails_as_a_silent_fallback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    result = parity_on("stable-audio-tiny-tea-cache",
                       "model=stable-audio-tiny,cache_policy=tea_cache", tmp_path)  # fmt: skip
    figures = {m.name: m.value for m in result.measurements}
    assert result.outcome is GateOutcome.FAILED, result.reasons
    (reason,) = result.reasons
    assert reason.startswith("cache_policy=tea_cache: fast path inactive (silent fallback)")
    assert "TeaCache enablement lines = 1" in reason  # switched on, and nothing moved
    assert figures["outputs_identical"] == figures["outputs_compared"] >= 6
