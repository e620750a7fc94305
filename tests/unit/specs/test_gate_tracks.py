"""Gate tracks: every shipped gate declares one, a bad value is a located spec error, and each
track maps onto vLLM-Omni's CI levels."""

from pathlib import Path

import pytest

from omniqual.domain.gate import TRACK_CI_LEVELS, CiLevel, Track
from omniqual.specs.gates import load_gates
from omniqual.specs.matrix import load_catalog
from omniqual.specs.source import SpecError

ROOT = Path(__file__).resolve().parents[3]
AXES = ROOT / "tests" / "data" / "mini-project" / "matrices" / "axes.yaml"

EXPECTED = {
    "api-contract": Track.FUNCTION,
    "field-effect": Track.FUNCTION,
    "strict-load": Track.FUNCTION,
    "fails-fast": Track.FUNCTION,
    "isolation": Track.FUNCTION,
    "lora": Track.FUNCTION,
    "reference-parity": Track.ACCURACY,
    "offline-parity": Track.ACCURACY,
    "parity": Track.ACCURACY,
    "offload-sweep": Track.PERFORMANCE,
    "offload-sweep-gpu": Track.PERFORMANCE,
    "perf": Track.PERFORMANCE,
    "perf-ab": Track.PERFORMANCE,
    "step-ab": Track.PERFORMANCE,
    "cache-tiers": Track.PERFORMANCE,
    "abort": Track.RELIABILITY,
    "soak": Track.RELIABILITY,
    "soak-long": Track.RELIABILITY,
    "fault-injection": Track.RELIABILITY,
    "startup": Track.RELIABILITY,
}


def test_every_project_gate_declares_its_track() -> None:
    gates = load_gates(ROOT / "gates", load_catalog(ROOT / "matrices" / "axes.yaml"))
    assert {gid: g.spec.track for gid, g in gates.items()} == EXPECTED


def test_tracks_map_onto_the_ci_levels() -> None:
    assert set(TRACK_CI_LEVELS) == set(Track)
    assert TRACK_CI_LEVELS[Track.RELIABILITY] == (CiLevel.L5,)
    assert TRACK_CI_LEVELS[Track.FUNCTION][:2] == (CiLevel.L1, CiLevel.L2)
    gates = load_gates(ROOT / "gates", load_catalog(ROOT / "matrices" / "axes.yaml"))
    assert gates["soak"].spec.ci_levels == (CiLevel.L5,)
    assert gates["reference-parity"].spec.ci_levels == (CiLevel.L3, CiLevel.L4)


def test_a_bad_track_names_file_line_and_field(tmp_path: Path) -> None:
    (tmp_path / "gates").mkdir()
    path = tmp_path / "gates" / "g.yaml"
    path.write_text("id: g\nkind: strict_load\nversion: 1\ntrack: speed\n")
    with pytest.raises(SpecError) as caught:
        load_gates(tmp_path / "gates", load_catalog(AXES))
    (problem,) = caught.value.problems
    assert (problem.file, problem.line, problem.field) == (str(path), 4, "track")
    assert "function" in problem.message and "reliability" in problem.message


def test_a_gate_without_a_track_is_in_none(tmp_path: Path) -> None:
    (tmp_path / "gates").mkdir()
    (tmp_path / "gates" / "g.yaml").write_text("id: g\nkind: strict_load\nversion: 1\n")
    spec = load_gates(tmp_path / "gates", load_catalog(AXES))["g"].spec
    assert spec.track is None and spec.ci_levels == ()
