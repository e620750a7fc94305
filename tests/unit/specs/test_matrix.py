"""Matrix definitions expand to exact rows; every mistake is reported with its line."""

from pathlib import Path

import pytest

from omniqual.specs.gates import load_gates
from omniqual.specs.matrix import load_catalog, load_matrix
from omniqual.specs.source import SpecError

MINI = Path(__file__).resolve().parents[2] / "data" / "mini-project"


def gates() -> dict[str, object]:
    return dict(load_gates(MINI / "gates", load_catalog(MINI / "matrices" / "axes.yaml")))


def test_rows_and_products_expand_with_defaults_and_exclusions() -> None:
    loaded = load_matrix(MINI / "matrices" / "mini.yaml", gates())
    keys = [str(r.key) for r in loaded.rows]
    assert keys == [
        "model=m;task=t2i;quantization=none;hardware=cpu",
        "model=m;task=t2i;quantization=fp8;hardware=cpu",
        "model=m;task=t2v;quantization=none;hardware=cpu",
    ]
    assert loaded.rows[2].spec.limited is not None


def test_three_planted_mistakes_are_all_named_with_lines() -> None:
    with pytest.raises(SpecError) as caught:
        load_matrix(MINI / "matrices" / "broken.yaml", gates())
    text = str(caught.value).splitlines()
    assert any(":4: rows.0.key.task: unknown value 't2x'" in line for line in text), text
    assert any(":7: rows.1.requires.1: unknown gate 'lod'" in line for line in text), text
    assert any(":8: rows.2.key.colour: unknown axis 'colour'" in line for line in text), text
    assert len(caught.value.problems) == 3


def test_duplicate_rows_are_contradictions(tmp_path: Path) -> None:
    (tmp_path / "axes.yaml").write_text((MINI / "matrices" / "axes.yaml").read_text())
    path = tmp_path / "dup.yaml"
    path.write_text(
        "name: dup\ndefaults: {hardware: cpu}\nrows:\n"
        "  - key: {model: m, task: t2i, quantization: none}\n"
        "  - key: {model: m, task: t2i, quantization: none}\n"
    )
    with pytest.raises(SpecError, match=r"dup.yaml:5: rows.1.key: row .* defined \(line 4\)"):
        load_matrix(path)


def test_required_and_rejection_gate_overlap_is_a_contradiction(tmp_path: Path) -> None:
    (tmp_path / "axes.yaml").write_text((MINI / "matrices" / "axes.yaml").read_text())
    path = tmp_path / "both.yaml"
    path.write_text(
        "name: both\ndefaults: {hardware: cpu}\nrows:\n"
        "  - key: {model: m, task: t2i, quantization: none}\n"
        "    requires: [ff]\n    unsupported_by: [ff]\n"
    )
    with pytest.raises(SpecError, match="cannot both be required"):
        load_matrix(path)


def test_product_base_and_axes_clash(tmp_path: Path) -> None:
    (tmp_path / "axes.yaml").write_text((MINI / "matrices" / "axes.yaml").read_text())
    path = tmp_path / "clash.yaml"
    path.write_text(
        "name: clash\ndefaults: {hardware: cpu}\nproducts:\n"
        "  - base: {model: m, task: t2i}\n    axes: {task: [t2v], quantization: [none]}\n"
    )
    with pytest.raises(SpecError, match="also varied"):
        load_matrix(path)


def test_the_embedded_matrix_loads_against_the_project() -> None:
    root = Path(__file__).resolve().parents[3]
    loaded = load_matrix(root / "matrices" / "embedded-cpu.yaml")
    assert len(loaded.rows) >= 10
    assert {r.key.get("model") for r in loaded.rows} >= {"sd3-tiny", "wan-t2v-tiny"}


def test_a_row_declares_its_restart_policy_and_rows_default_to_recovers(tmp_path: Path) -> None:
    (tmp_path / "axes.yaml").write_text((MINI / "matrices" / "axes.yaml").read_text())
    path = tmp_path / "policy.yaml"
    path.write_text(
        "name: policy\ndefaults: {hardware: cpu}\nrows:\n"
        "  - key: {model: m, task: t2i, quantization: none}\n"
        "    restart_policy: exits\n"
        "  - key: {model: m, task: t2v, quantization: none}\n"
    )
    loaded = load_matrix(path)
    assert [r.spec.restart_policy.value for r in loaded.rows] == ["exits", "recovers"]
    path.write_text(
        "name: policy\ndefaults: {hardware: cpu}\nrows:\n"
        "  - key: {model: m, task: t2i, quantization: none}\n"
        "    restart_policy: reboots\n"
    )
    with pytest.raises(SpecError, match=r"policy.yaml:5: rows.0.restart_policy"):
        load_matrix(path)
