"""A candidate one per-request adapter away from its parent: its floor is the lora gate."""

from pathlib import Path

import pytest

from omniqual.specs.matrix import load_matrix
from omniqual.specs.source import SpecError
from tests.unit.specs.test_matrix import BASE_KEY, DOD, PARENT, dod_matrix


def rows(requires: str) -> str:
    return (
        f"  - key: {BASE_KEY}\n    requires: {DOD}\n"
        f"  - key: {BASE_KEY[:-1]}, adapter: request-lora}}\n{PARENT}"
        f"    requires: {requires}\n"
    )


def test_an_adapter_row_requires_the_lora_gate(tmp_path: Path) -> None:
    loaded = load_matrix(dod_matrix(tmp_path, rows("[lora]")))
    base, lora = loaded.rows
    assert loaded.parent_of(lora) == base.key
    assert loaded.candidate_axes(lora) == ("adapter",)
    assert loaded.correctness_gate(lora) == "lora"
    assert loaded.correctness_gate(base) == "reference-parity"
    assert str(lora.key).endswith(";adapter=request-lora")
    assert "adapter" not in str(base.key)


def test_parity_does_not_stand_in_for_an_adapter_rows_lora_gate(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match=r"dod.yaml:11: rows.1.requires: .*requires lora"):
        load_matrix(dod_matrix(tmp_path, rows("[parity]")))
