"""A candidate one per-request adapter away from its parent: its floor is the lora gate."""

from pathlib import Path

import pytest

from omniqual.specs.gates import load_gates
from omniqual.specs.matrix import load_catalog, load_matrix
from omniqual.specs.source import SpecError
from tests.unit.specs.test_matrix import BASE_KEY, DOD, PARENT, dod_matrix

ROOT = Path(__file__).resolve().parents[3]


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



def test_a_row_listing_a_gate_that_never_applies_to_it_is_a_spec_error(tmp_path: Path) -> None:
    # The lora gate applies to adapter rows only: a baseline row listing it could never leave
    # `not tested`, so the loader names it at the row's line instead.
    catalog = load_catalog(ROOT / "matrices" / "axes.yaml")
    gates = dict(load_gates(ROOT / "gates", catalog, ROOT))
    (tmp_path / "axes.yaml").write_text((ROOT / "matrices" / "axes.yaml").read_text())
    shipped = (ROOT / "matrices" / "embedded-cpu.yaml").read_text()
    (tmp_path / "m.yaml").write_text(shipped)
    assert len(load_matrix(tmp_path / "m.yaml", gates).rows) > 20
    (tmp_path / "m.yaml").write_text(shipped.replace(
        "fault-injection, startup, perf]", "fault-injection, startup, perf, lora]", 1))
    with pytest.raises(SpecError, match=r"m.yaml:\d+: requires: .*'lora', whose applies_to "
                                        r".*adapter=request-lora"):
        load_matrix(tmp_path / "m.yaml", gates)
