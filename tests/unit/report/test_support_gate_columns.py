"""A feature a gate qualifies on a row's own server (per-request LoRA, no axis): the rows that
require the gate cover its cell, their states decide it, and they decide no axis feature's."""

from omniqual.domain.feature_tables import FeatureColumn, FeatureTableMap, ModalitySection
from omniqual.domain.outcomes import CellState as S
from omniqual.report.support_tables import model_support_table, pair_cell
from tests.unit.report.support_fixtures import HW, matrix, row

CACHE = "⚡Cache-DiT"
LORA = "🔧LoRA Inference"
COLUMNS = (
    FeatureColumn(CACHE, "cache_policy", ("cache_dit",)),
    FeatureColumn(LORA, None, (), gate="lora"),
)
MAPPING = FeatureTableMap(
    sections=(ModalitySection("ImageGen", ("t2i",)),), columns=COLUMNS, pairs=COLUMNS,
    models=(("Stable-Diffusion-3", "sd3-tiny"),), source="features.yaml",
)  # fmt: skip
WITH_LORA = ("api-contract", "reference-parity", "lora")


def cells(*rows: object) -> dict[str, object]:
    table = model_support_table(matrix(*rows), MAPPING, "sd3-tiny", HW)  # type: ignore[arg-type]
    return {c.column: c for c in table.sections[0].cells}


def test_a_validated_row_requiring_the_gate_ticks_the_gate_column_only() -> None:
    got = cells(row(S.VALIDATED, required=WITH_LORA))
    assert got[LORA].symbol == "✅" and got[LORA].covering == 1  # type: ignore[attr-defined]
    assert got[LORA].link.startswith("runs/run-1/journal.jsonl#")  # type: ignore[attr-defined]
    assert got[CACHE].symbol == "❓" and got[CACHE].covering == 0  # type: ignore[attr-defined]


def test_a_failed_gate_leaves_the_cell_unverified_and_named() -> None:
    failed = row(S.NOT_TESTED, required=WITH_LORA,
                 gate_outcomes={"api-contract": "passed", "lora": "failed"},
                 reasons=("lora failed: adapter_ignored: the output did not move",))  # fmt: skip
    got = cells(failed)
    assert got[LORA].symbol == "❓"  # type: ignore[attr-defined]
    assert got[LORA].failed_gates == ("lora",)  # type: ignore[attr-defined]
    assert "adapter_ignored" in got[LORA].note  # type: ignore[attr-defined]


def test_rows_that_do_not_require_the_gate_say_nothing_of_it() -> None:
    got = cells(row(S.VALIDATED), row(S.VALIDATED, cache_policy="cache_dit"))
    assert got[LORA].symbol == "❓" and got[LORA].covering == 0  # type: ignore[attr-defined]
    assert got[CACHE].symbol == "✅"  # type: ignore[attr-defined]


def test_an_axis_feature_row_requiring_the_gate_covers_the_pair_not_the_single_cells() -> None:
    both = row(S.VALIDATED, cache_policy="cache_dit", required=WITH_LORA)
    compiled = matrix(both)
    assert pair_cell(compiled.rows, COLUMNS, CACHE, LORA, HW).symbol == "✅"
    got = cells(both)
    assert got[CACHE].symbol == "❓" and got[LORA].symbol == "❓"  # type: ignore[attr-defined]
