"""``perf baseline update --add``: a baseline that keeps its own launches and adds later runs',
so it spans the days (and hosts of its class) that later runs are judged on."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from omniqual.domain.result import GateResult
from omniqual.engine.perf_baseline import BaselineRefused, plan_update
from omniqual.specs.perf_baseline import load_baseline
from tests.unit.engine.test_perf_baseline_update import LAUNCHES, _probed, launches

INTEL = "GenuineIntel x86_64 avx2"
# Another day's launches, 5 % slower than the first day's: the spread between days.
LATER = ([0.210, 0.212, 0.208], [0.211, 0.213, 0.209], [0.209, 0.211, 0.207])


def on(cpu: str, tag: str = "", values: tuple[list[float], ...] = LAUNCHES) -> list[GateResult]:
    """Runs of ``values`` launches on a host of class ``cpu`` (its reference workload read)."""
    return launches(tag, values, host=_probed(cpu)["host"])


def _first(tmp_path: Path) -> Path:
    update = plan_update(on(INTEL), tmp_path, "owners", threshold=0.15)
    update.write()
    return update.path


def test_added_runs_join_the_kept_launches(tmp_path: Path) -> None:
    path = _first(tmp_path)
    later = on(INTEL, "d2-", LATER)
    update = plan_update(later, tmp_path, None, keep=True)
    update.write()
    both = load_baseline(path)
    assert [x.run_id for x in both.evidence.launches] == [
        "run0", "run1", "run2", "rund2-0", "rund2-1", "rund2-2"]  # fmt: skip
    assert len(both.evidence.repetitions) == 18
    # Each kept launch keeps its own repetitions: the within-launch spread is still 1 %.
    assert both.evidence.launches[0].mean == pytest.approx(0.2)
    assert both.evidence.launches[3].mean == pytest.approx(0.21)
    assert both.evidence.mean == pytest.approx(statistics.fmean([0.2, 0.201, 0.199,
                                                                 0.21, 0.211, 0.209]))
    assert both.threshold == 0.15 and both.owner == "owners"
    assert both.evidence.run_id == "rund2-2" and both.evidence.host_cpu_class == INTEL
    # The day-to-day spread widens what the baseline can hold; one day alone held less.
    first_day = plan_update(on(INTEL), tmp_path / "alone", "o", threshold=0.15)
    assert both.resolution is not None and first_day.new.resolution is not None
    assert both.resolution.min_threshold > first_day.new.resolution.min_threshold


def test_one_added_run_is_enough_beside_a_baseline_of_three(tmp_path: Path) -> None:
    _first(tmp_path)
    update = plan_update(on(INTEL, "d2-", LATER[:1]), tmp_path, None, keep=True)
    assert len(update.new.evidence.launches) == 4


def test_a_run_the_baseline_already_holds_is_not_added_twice(tmp_path: Path) -> None:
    _first(tmp_path)
    with pytest.raises(BaselineRefused, match="already holds"):
        plan_update(on(INTEL)[:1], tmp_path, None, keep=True)


def test_runs_of_another_cpu_class_are_not_added(tmp_path: Path) -> None:
    path = _first(tmp_path)
    amd = on("AuthenticAMD x86_64 avx2", "amd", LATER)
    # The AMD runs name their own file; adding to it needs one there first.
    with pytest.raises(BaselineRefused, match="does not exist yet"):
        plan_update(amd, tmp_path, None, keep=True)
    assert load_baseline(path).evidence.host_cpu_class == INTEL


def test_without_add_the_runs_replace_the_launches(tmp_path: Path) -> None:
    _first(tmp_path)
    update = plan_update(on(INTEL, "d2-", LATER), tmp_path, None)
    assert [x.run_id for x in update.new.evidence.launches] == ["rund2-0", "rund2-1", "rund2-2"]
