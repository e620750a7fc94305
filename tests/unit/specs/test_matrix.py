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


REPO_AXES = Path(__file__).resolve().parents[3] / "matrices" / "axes.yaml"
BASE_KEY = "{model: sd3-tiny, task: t2i, api_mode: images-generations, output_transport: b64-json}"
DEFAULTS = (
    "defaults: {execution: serial/1, shape_schedule: default, attention_backend: sdpa,\n"
    "  packed_layout: padded, cache_policy: none, quantization: none, offload: resident,\n"
    "  topology: 1-device, hardware: cpu-x86_64-2core-avx2, dtype: bf16}\n"
)
DOD = "[api-contract, strict-load, reference-parity]"


def dod_matrix(tmp_path: Path, rows: str) -> Path:
    """A matrix over the shipped axes whose rows are ``rows`` (YAML under ``rows:``)."""
    (tmp_path / "axes.yaml").write_text(REPO_AXES.read_text())
    path = tmp_path / "dod.yaml"
    path.write_text(f"name: dod\n{DEFAULTS}rows:\n{rows}")
    return path


def test_a_baseline_row_missing_task_gates_is_a_spec_error_naming_line_and_gates(
    tmp_path: Path,
) -> None:
    path = dod_matrix(tmp_path, f"  - key: {BASE_KEY}\n    requires: [api-contract, abort, soak]\n")
    with pytest.raises(SpecError) as caught:
        load_matrix(path)
    (problem,) = caught.value.problems
    assert problem.line == 7 and problem.field == "rows.0.requires"
    assert "strict-load, reference-parity" in problem.message
    assert "baseline" in problem.message
    # With every gate of the floor listed, the same row loads.
    path = dod_matrix(tmp_path, f"  - key: {BASE_KEY}\n    requires: {DOD}\n")
    assert len(load_matrix(path).rows) == 1


def test_the_floor_binds_a_project_whose_registry_defines_the_dod_gates(tmp_path: Path) -> None:
    path = dod_matrix(tmp_path, f"  - key: {BASE_KEY}\n    requires: [api-contract]\n")
    registry = {g: object() for g in ("api-contract", "strict-load", "reference-parity", "parity")}
    with pytest.raises(SpecError, match=r"dod.yaml:7: rows.0.requires: .*strict-load"):
        load_matrix(path, registry)


def test_a_limited_block_cannot_shorten_the_floor(tmp_path: Path) -> None:
    rows = (
        f"  - key: {BASE_KEY}\n    requires: {DOD}\n"
        "    limited:\n      limitation: up to 64x64\n      requires: [api-contract]\n"
        "      rejection: [api-contract]\n"
    )
    with pytest.raises(SpecError, match=r"dod.yaml:10: rows.0.limited.requires: .*strict-load"):
        load_matrix(dod_matrix(tmp_path, rows))


def test_a_row_claiming_only_a_refusal_is_not_held_to_the_floor(tmp_path: Path) -> None:
    rows = (
        f"  - key: {BASE_KEY}\n    requires: {DOD}\n"
        f"  - key: {BASE_KEY[:-1]}, execution: step/1}}\n"
        "    parent_row: {model: sd3-tiny, task: t2i, api_mode: images-generations,\n"
        "                 output_transport: b64-json}\n"
        "    unsupported_by: [fails-fast]\n"
    )
    loaded = load_matrix(dod_matrix(tmp_path, rows))
    assert [r.spec.unsupported_by for r in loaded.rows] == [(), ("fails-fast",)]


PARENT = (
    "    parent_row: {model: sd3-tiny, task: t2i, api_mode: images-generations,\n"
    "                 output_transport: b64-json}\n"
)


def test_a_candidate_needs_parity_and_a_parent_one_axis_away(tmp_path: Path) -> None:
    rows = (
        f"  - key: {BASE_KEY}\n    requires: {DOD}\n"
        f"  - key: {BASE_KEY[:-1]}, quantization: fp8-online-dit}}\n{PARENT}"
        "    requires: [parity]\n"
    )
    loaded = load_matrix(dod_matrix(tmp_path, rows))
    base, candidate = loaded.rows
    assert loaded.parent_of(candidate) == base.key and loaded.parent_of(base) is None
    shortened = rows.replace("requires: [parity]", "requires: [api-contract]")
    with pytest.raises(SpecError, match=r"dod.yaml:11: rows.1.requires: .*candidate.*parity"):
        load_matrix(dod_matrix(tmp_path, shortened))


def test_a_candidate_two_axes_from_its_parent_is_a_spec_error(tmp_path: Path) -> None:
    rows = (
        f"  - key: {BASE_KEY}\n    requires: {DOD}\n"
        f"  - key: {BASE_KEY[:-1]}, quantization: fp8-online-dit, offload: cpu-offload}}\n"
        f"{PARENT}    requires: [parity]\n"
    )
    with pytest.raises(SpecError) as caught:
        load_matrix(dod_matrix(tmp_path, rows))
    (problem,) = caught.value.problems
    assert (problem.line, problem.field) == (9, "rows.1.parent_row")
    assert "2 axes" in problem.message and "quantization" in problem.message
    assert "offload" in problem.message


def test_a_candidate_whose_parent_is_not_in_the_matrix_is_a_spec_error(tmp_path: Path) -> None:
    rows = f"  - key: {BASE_KEY[:-1]}, quantization: fp8-online-dit}}\n{PARENT}"
    rows += "    requires: [parity]\n"
    with pytest.raises(SpecError) as caught:
        load_matrix(dod_matrix(tmp_path, rows))
    (problem,) = caught.value.problems
    assert (problem.line, problem.field) == (7, "rows.0.parent_row")
    assert "not a row of this matrix" in problem.message


def test_a_parent_row_naming_an_unknown_value_is_a_spec_error(tmp_path: Path) -> None:
    rows = (
        f"  - key: {BASE_KEY}\n    requires: {DOD}\n"
        f"  - key: {BASE_KEY[:-1]}, quantization: fp8-online-dit}}\n"
        f"{PARENT.replace('images-generations', 'images-generation')}    requires: [parity]\n"
    )
    with pytest.raises(SpecError, match=r"dod.yaml:9: rows.1.parent_row.api_mode: .*unknown"):
        load_matrix(dod_matrix(tmp_path, rows))


def test_candidates_that_are_each_others_parents_are_a_spec_error(tmp_path: Path) -> None:
    fp8 = "{model: sd3-tiny, task: t2i, api_mode: images-generations, output_transport: b64-json,"
    rows = (
        f"  - key: {fp8} quantization: fp8-online-dit}}\n"
        f"    parent_row: {fp8} quantization: int8}}\n    requires: [parity]\n"
        f"  - key: {fp8} quantization: int8}}\n"
        f"    parent_row: {fp8} quantization: fp8-online-dit}}\n    requires: [parity]\n"
    )
    with pytest.raises(SpecError, match="cycle"):
        load_matrix(dod_matrix(tmp_path, rows))


def test_every_shipped_matrix_row_meets_the_floor() -> None:
    root = Path(__file__).resolve().parents[3]
    loaded = load_matrix(root / "matrices" / "embedded-cpu.yaml")
    step = next(r for r in loaded.rows if r.key.get("execution") == "step/1"
                and r.key.get("model") == "qwen-image-tiny")  # fmt: skip
    parent = loaded.parent_of(step)
    assert parent is not None and parent.get("execution") == "serial/1"


def test_a_row_cannot_list_a_gate_that_decides_no_row(tmp_path: Path) -> None:
    # A comparison run on request (an A/A pass says nothing of the build) never counts for a row.
    gates_dir = tmp_path / "gates"
    gates_dir.mkdir()
    (gates_dir / "ab.yaml").write_text("id: ab\nkind: perf_ab\nversion: 1\ndecides_rows: false\n")
    (tmp_path / "axes.yaml").write_text((MINI / "matrices" / "axes.yaml").read_text())
    path = tmp_path / "ab.yaml"
    path.write_text(
        "name: ab\ndefaults: {hardware: cpu}\nrows:\n"
        "  - key: {model: m, task: t2i, quantization: none}\n"
        "    requires: [ab]\n"
    )
    known = dict(load_gates(gates_dir, load_catalog(tmp_path / "axes.yaml")))
    with pytest.raises(SpecError, match=r"ab.yaml:5: rows.0.requires.0: gate 'ab' decides no row"):
        load_matrix(path, known)
