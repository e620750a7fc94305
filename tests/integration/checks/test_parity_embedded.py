"""Gate ``parity`` for real, through the engine: ``gate run parity --target sd3-tiny-fp8`` launches
the fp8 recipe (vLLM-Omni 0.30 on the CPU platform) as the candidate and its dense BF16 baseline
(recipe ``sd3-tiny``) as the reference, launched twice (its spread against itself). On this CPU
build ``--quantization fp8`` changes nothing: the images equal the baseline's, which equals
itself across its two launches, and the only fp8 log lines say it was switched on. So the gate
must fail with the reason it measured: the silent fallback."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from omniqual.checks.parity.candidate_proof import SILENT_FALLBACK
from omniqual.domain.outcomes import GateOutcome
from omniqual.engine.single_gate import run_single_gate
from tests.integration.embedded.embedded_server import EMBEDDED_MARKS

ROOT = Path(__file__).resolve().parents[3]

pytestmark = EMBEDDED_MARKS


def test_sd3_fp8_on_cpu_fails_parity_as_a_silent_fallback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    results = asyncio.run(
        run_single_gate(
            "parity", "sd3-tiny-fp8", "quantization=fp8-online-dit",
            matrix=ROOT / "matrices" / "embedded-cpu.yaml", evidence_root=tmp_path,
            command=("omniqual", "gate", "run", "parity", "--target", "sd3-tiny-fp8"),
        )
    )  # fmt: skip
    (result,) = results
    figures = {m.name: m.value for m in result.measurements}
    print(result.outcome.value, result.reasons, sorted(figures.items()))
    assert result.outcome is GateOutcome.FAILED, result.reasons
    (reason,) = [r for r in result.reasons if SILENT_FALLBACK in r]
    assert "output: 0 of 6 outputs differ from the reference beyond its own spread" in reason
    assert "all 6 outputs identical on its second pass" in reason
    assert "census: 0 of" in reason  # no linear was quantized: the census proves the fallback
    assert figures["outputs_identical"] == figures["outputs_compared"] >= 6
    assert figures["candidate_latency_median"] > 0 and figures["reference_latency_median"] > 0
    assert figures["reference_peak_pss"] > 0 and figures["candidate_peak_pss"] > 0
    parity = result.effective["parity"]
    assert isinstance(parity, dict)
    assert parity["reference_recipe"] == "sd3-tiny"
    stored = {a.sha256 for a in result.artifacts}
    pairs = parity["pairs"]
    assert isinstance(pairs, list) and pairs
    for pair in pairs:
        assert isinstance(pair, dict) and isinstance(pair["files"], dict)
        assert set(pair["files"].values()) <= stored
        for digest in pair["files"].values():
            assert (result_dir(tmp_path) / "artifacts" / str(digest)).is_file()


def result_dir(root: Path) -> Path:
    (run_dir,) = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")]
    return run_dir
