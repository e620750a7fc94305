"""Compiled rows and a small feature mapping for the support-table and claims-audit tests."""

from datetime import UTC, datetime

from omniqual.domain.feature_tables import FeatureColumn, FeatureTableMap, ModalitySection
from omniqual.domain.matrix import CompiledMatrix, CompiledRow, EvidenceRef
from omniqual.domain.outcomes import CellState

HW = "cpu-x86_64-2core-avx2"
GPU = "1x-h200-141gb"
BASE = {"model": "sd3-tiny", "task": "t2i", "cache_policy": "none", "offload": "resident",
        "execution": "serial/1", "hardware": HW}  # fmt: skip

MAPPING = FeatureTableMap(
    sections=(ModalitySection("ImageGen", ("t2i", "i2i")), ModalitySection("VideoGen", ("t2v",))),
    columns=(
        FeatureColumn("⚡Cache-DiT", "cache_policy", ("cache_dit",)),
        FeatureColumn("💾CPU Offload (Layerwise)", "offload", ("layerwise", "layerwise-nopin"),
                      aliases=("💾CPU Offloading (Layerwise)",)),
        FeatureColumn("🔄Step Execution", "execution", ("step/1",)),
        FeatureColumn("💾VAE-Patch-Parallel", None, ()),
    ),
    pairs=(
        FeatureColumn("⚡Cache-DiT", "cache_policy", ("cache_dit",)),
        FeatureColumn("💾CPU Offloading (Layerwise)", "offload", ("layerwise", "layerwise-nopin")),
        FeatureColumn("🔄Step Execution", "execution", ("step/1",)),
    ),
    models=(("Stable-Diffusion-3", "sd3-tiny"), ("Wan2.2", "wan-tiny")),
    source="features.yaml",
)


def row(
    state: CellState,
    *,
    reasons: tuple[str, ...] = (),
    limitation: str | None = None,
    note: str = "",
    gate_outcomes: dict[str, str] | None = None,
    required: tuple[str, ...] = ("api-contract", "parity"),
    **axes: str,
) -> CompiledRow:
    values = {**BASE, **axes}
    key = ";".join(f"{k}={v}" for k, v in values.items())
    evidence = () if state is CellState.NOT_TESTED else (
        EvidenceRef(run_id="run-1", result_id=f"r-{len(key)}-{state.value[:3]}",
                    gate_id="parity", outcome="passed", link=f"runs/run-1/journal.jsonl#{key}"),
    )  # fmt: skip
    return CompiledRow(key=key, axes=values, state=state, reasons=reasons,
                       required_gates=required, limitation=limitation, evidence=evidence,
                       gate_outcomes=gate_outcomes or {}, note=note)  # fmt: skip


def matrix(*rows: CompiledRow) -> CompiledMatrix:
    return CompiledMatrix(name="m", title="Test matrix", axes=tuple(BASE),
                          compiled_at=datetime(2026, 1, 1, tzinfo=UTC),
                          rows=tuple(sorted(rows, key=lambda r: r.key)))  # fmt: skip
