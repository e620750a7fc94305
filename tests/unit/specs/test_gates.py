"""Gate loading: the spec hash covers the gate file and every input its params name."""

import hashlib
from pathlib import Path

import pytest

from omniqual.specs.gates import load_gates, named_inputs
from omniqual.specs.matrix import load_catalog
from omniqual.specs.source import SpecError

AXES = Path(__file__).resolve().parents[2] / "data" / "mini-project" / "matrices" / "axes.yaml"


def write_project(root: Path, params: str) -> Path:
    (root / "gates" / "maps").mkdir(parents=True)
    (root / "gates" / "maps" / "a.yaml").write_text("id: a\n")
    (root / "gates" / "g.yaml").write_text(f"id: g\nkind: strict_load\nversion: 1\n{params}")
    return root / "gates"


def sha(root: Path, params: str = "") -> str:
    gates = load_gates(write_project(root, params), load_catalog(AXES))
    return gates["g"].sha256


def test_a_gate_naming_nothing_hashes_as_its_file(tmp_path: Path) -> None:
    gates = write_project(tmp_path, "params:\n  runtime: meta\n")
    loaded = load_gates(gates, load_catalog(AXES))["g"]
    assert loaded.inputs == ()
    assert loaded.sha256 == hashlib.sha256((gates / "g.yaml").read_bytes()).hexdigest()


def test_named_directories_are_hashed_file_by_file(tmp_path: Path) -> None:
    params = "params:\n  mappings_dir: gates/maps\n"
    before = sha(tmp_path / "one", params)
    assert before == sha(tmp_path / "two", params)  # content, not location, decides
    gates = write_project(tmp_path / "three", params)
    (gates / "maps" / "b.yaml").write_text("id: b\n")
    assert load_gates(gates, load_catalog(AXES))["g"].sha256 != before  # a new mapping
    (gates / "maps" / "b.yaml").unlink()
    assert load_gates(gates, load_catalog(AXES))["g"].sha256 == before
    (gates / "maps" / "a.yaml").write_text("id: a\nignore: [x]\n")
    assert load_gates(gates, load_catalog(AXES))["g"].sha256 != before  # an edited mapping


def test_regexes_prose_and_the_project_itself_are_not_inputs(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    params = {
        "patterns": [r"(?i)\b(not supported|cannot)\b", "x" * 5000],
        "note": "see the README",
        "here": ".",
        "up": "..",
        "nested": {"dir": "sub"},
    }
    assert named_inputs(params, tmp_path) == (tmp_path / "sub",)


def test_a_gate_can_no_longer_claim_startup_only(tmp_path: Path) -> None:
    # Whether a gate promotes a row is the matrix's `requires`/`unsupported_by`; a per-gate
    # switch that nothing set was a second, hidden way to discard evidence.
    gates = write_project(tmp_path, "startup_only: true\n")
    with pytest.raises(SpecError) as raised:
        load_gates(gates, load_catalog(AXES))
    assert "g.yaml:4: startup_only" in str(raised.value)


def test_watched_directories_are_not_inputs(tmp_path: Path) -> None:
    # A URL target's temp dir is named in params so its residue is counted; the server writes
    # there during the gate, so hashing it would make the gate's own result stale at once.
    (tmp_path / "tmp").mkdir()
    (tmp_path / "contracts").mkdir()
    params = {
        "temp_dirs": [str(tmp_path / "tmp")],
        "reliability": {"watch_dirs": ["tmp"]},
        "contracts_dir": "contracts",
    }
    assert named_inputs(params, tmp_path) == (tmp_path / "contracts",)
