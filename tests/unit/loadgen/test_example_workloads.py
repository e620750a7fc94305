"""The workload files shipped in examples/ load as `omniqual bench` loads them and plan requests."""

from pathlib import Path

import pytest

from omniqual.loadgen.workload import WorkloadSpec

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*workload*.yaml")), ids=lambda p: p.name)
def test_a_shipped_workload_loads(path: Path) -> None:
    spec = WorkloadSpec.from_yaml(path)
    assert spec.entries and all(entry.weight > 0 for entry in spec.entries)


def test_at_least_one_workload_is_shipped() -> None:
    assert list(EXAMPLES.glob("*workload*.yaml"))
