"""Gate params are checked at load with file:line and field: a tolerance that bounds nothing is
refused before any run, since it would pass every comparison."""

from pathlib import Path

import pytest

from omniqual.engine.run.gate_runner import check_params
from omniqual.specs.gates import load_gates
from omniqual.specs.matrix import load_catalog
from omniqual.specs.source import SpecError

ROOT = Path(__file__).resolve().parents[3]
BOUNDS = "      image: {min_psnr_db: 30.0, min_ssim: 0.95}\n"


def _gate_with(tmp_path: Path, replacement: str) -> tuple[Path, int]:
    """gates/reference-parity.yaml with its image bounds replaced; the replaced line's number."""
    text = (ROOT / "gates/reference-parity.yaml").read_text(encoding="utf-8")
    assert BOUNDS in text
    line = text[: text.index(BOUNDS)].count("\n") + 1
    gates = tmp_path / "gates"
    gates.mkdir()
    path = gates / "reference-parity.yaml"
    path.write_text(text.replace(BOUNDS, replacement), encoding="utf-8")
    return path, line


@pytest.mark.parametrize("block", ["      image: {}\n", "      image: {require_exact: false}\n"])
def test_an_empty_tolerance_is_a_spec_error_at_its_line(tmp_path: Path, block: str) -> None:
    path, line = _gate_with(tmp_path, block)
    gates = load_gates(path.parent, load_catalog(ROOT / "matrices/axes.yaml"), ROOT)
    with pytest.raises(SpecError) as raised:
        check_params(gates["reference-parity"])
    (problem,) = raised.value.problems
    assert (problem.file, problem.line) == (str(path), line)
    assert problem.field == "params.tolerances.image.image"
    assert "sets no bound" in problem.message


def test_shipped_tolerances_all_bound_something() -> None:
    gates = load_gates(ROOT / "gates", load_catalog(ROOT / "matrices/axes.yaml"), ROOT)
    for gate in gates.values():
        check_params(gate)  # raises SpecError on an empty tolerance
