"""Gate ``offload-sweep`` for real, through the engine: ``gate run offload-sweep --target sd3-tiny``
on the resident row launches every point of the embedded SD3 sweep one at a time (vLLM-Omni 0.30
on the CPU platform): resident, layer offload without pinning at 0, 1 and 2 resident DiT blocks
(1 and 2 are refused: SD3 declares no resident DiT paths), model-level CPU offload, and the
default layerwise offload, which refuses at startup because pin_memory needs an accelerator.
Offload is lossless, so every served point's images equal the resident point's; on CPU the
memory figure is host PSS, and the frontier is what was measured."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from omniqual.domain.outcomes import GateOutcome
from omniqual.engine.single_gate import run_single_gate
from tests.integration.embedded.embedded_server import EMBEDDED_MARKS

ROOT = Path(__file__).resolve().parents[3]

pytestmark = EMBEDDED_MARKS

SERVED = ("resident", "layer-nopin-r0", "cpu-offload")
# Seen with vLLM-Omni 0.30: a resident_layers count above 0 routes the layer offload to the
# rank-local DLO backend, which refuses SD3 (its DiT declares no resident_dit_paths).
REFUSED = {
    "layer-nopin-r1": "resident_layers=1 was requested, but this model declares no matching"
    " resident_dit_paths",
    "layer-nopin-r2": "resident_layers=2 was requested, but this model declares no matching"
    " resident_dit_paths",
    "layerwise-default": "pin_memory=True requires a CUDA or other accelerator backend",
}


def test_sd3_offload_sweep_on_cpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    results = asyncio.run(
        run_single_gate(
            "offload-sweep", "sd3-tiny", "offload=resident,api_mode=images-generations",
            matrix=ROOT / "matrices" / "embedded-cpu.yaml", evidence_root=tmp_path,
            command=("omniqual", "gate", "run", "offload-sweep", "--target", "sd3-tiny"),
        )
    )  # fmt: skip
    (result,) = results
    sweep = result.effective["sweep"]
    assert isinstance(sweep, dict)
    points: dict[str, dict[str, Any]] = {p["name"]: p for p in sweep["points"]}  # type: ignore[union-attr,index,misc]
    for name, p in points.items():
        print(name, p["startup_elapsed_s"], p["latency_median_s"], p["latency_min_s"],
              p["latency_max_s"], p["peak_pss_bytes_load"], p["peak_pss_bytes_steady"],
              p["parity"], p["verdict"], p["verdict_reasons"], p["message"])  # fmt: skip
    print(result.outcome.value, result.reasons, sweep["frontier"], sweep["dominated"],
          sweep["degenerate"], sweep["recommended"], sweep["resolution_note"])  # fmt: skip
    assert list(points) == [
        "resident", "layer-nopin-r0", "layer-nopin-r1", "layer-nopin-r2", "cpu-offload",
        "layerwise-default",
    ]  # fmt: skip
    for name, message in REFUSED.items():
        refused = points[name]
        assert refused["refused"] is True and refused["verdict"] == "invalid", name
        assert message in refused["message"], refused["message"]
        assert name not in sweep["frontier"]  # type: ignore[operator]
    for name in SERVED:
        p = points[name]
        assert p["refused"] is False and p["startup_s"] > 0, name
        assert p["verdict"] == "valid", (name, p["verdict_reasons"])
        assert p["repetitions"] == 7 and p["latency_min_s"] <= p["latency_median_s"], name
        assert p["peak_pss_bytes_load"] > 0 and p["peak_pss_bytes_steady"] > 0, name
        assert p["gpu_bytes_per_device"] is None, name
        if name != "resident":
            assert p["parity"]["outcome"] == "passed" and p["parity"]["identical"], (name, p)
    assert result.outcome is GateOutcome.PASSED, result.reasons
    assert sweep["frontier"] and set(sweep["frontier"]) <= set(SERVED)
    assert set(sweep["frontier"]).isdisjoint(sweep["dominated"])  # type: ignore[arg-type]
    assert "host memory itself" in str(sweep["memory_note"])
    roles = {a.role for a in result.artifacts}
    assert {"offload-sweep", "server-log", "observer-series"} <= roles
