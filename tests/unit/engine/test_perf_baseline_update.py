"""`perf baseline update`: a baseline from recorded perf results (each run one or more server
launches), with a diff for review; it states the smallest threshold its launch spread can hold
and refuses a threshold below it; it refuses too few launches, results that do not agree on the
deployment and work, and replacing the baseline of another serve configuration."""

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.result import GateResult
from omniqual.engine.perf_baseline import BaselineRefused, plan_update
from omniqual.loadgen.regression import Spread, resolution
from omniqual.specs.perf_baseline import load_baseline

ROW = "model=sd3-tiny;api_mode=images-generations;execution=serial/1;hardware=cpu-x86_64-2core-avx2"
T0 = datetime(2026, 1, 1, tzinfo=UTC)
# Launch means 0.2, 0.201, 0.199 (0.5 % apart), each launch's repetitions 1 % apart: a spread
# that holds the default 10 % threshold.
LAUNCHES = ([0.200, 0.202, 0.198], [0.201, 0.203, 0.199], [0.199, 0.201, 0.197])


def result(values: list[float], serve: str = "a" * 64, rid: str = "r1", run: str = "run1",
           workload: str = "0" * 64, minutes: int = 0, **extra: object) -> GateResult:  # fmt: skip
    perf = {**extra, "metric": "latency_mean", "values": values, "workload_sha256": workload,
            "hardware": "cpu-x86_64-2core-avx2",
            "serve": {"recipe": "sd3-tiny", "serve_config_sha256": serve,
                      "checkpoint_sha256": "c" * 64}}  # fmt: skip
    at = T0 + timedelta(minutes=minutes)
    return GateResult(result_id=rid, run_id=run, gate_id="perf", gate_version=1,
                      gate_kind="perf", row=ROW, outcome=GateOutcome.INVALID, target="sd3-tiny",
                      effective={"perf": perf}, started_at=at, finished_at=at)  # fmt: skip


def launches(tag: str = "", values: tuple[list[float], ...] = LAUNCHES,
             **extra: object) -> list[GateResult]:  # fmt: skip
    return [result(v, rid=f"r{tag}{i}", run=f"run{tag}{i}", minutes=10 * i, **extra)  # type: ignore[arg-type]
            for i, v in enumerate(values)]  # fmt: skip


def test_a_first_baseline_is_written_from_three_launches(tmp_path: Path) -> None:
    update = plan_update(launches(), tmp_path, "owners")
    assert update.old is None and update.diff[0].startswith("new baseline: latency_mean mean 0.2")
    assert "in 3 launches, launch means 0.2, 0.201, 0.199" in update.diff[0]
    update.write()
    written = load_baseline(update.path)
    assert update.path.name.endswith("__cpu-x86_64-2core-avx2.yaml")
    assert len(written.evidence.repetitions) == 9
    assert [launch.mean for launch in written.evidence.launches] == pytest.approx(
        [0.2, 0.201, 0.199])  # fmt: skip
    assert [launch.run_id for launch in written.evidence.launches] == ["run0", "run1", "run2"]
    assert written.evidence.run_id == "run2"  # the latest
    assert written.evidence.mean == pytest.approx(0.2) and written.owner == "owners"
    assert written.direction == "lower" and written.threshold == 0.10


def test_fewer_than_three_runs_are_refused(tmp_path: Path) -> None:
    with pytest.raises(BaselineRefused, match="at least 3 server launches"):
        plan_update(launches()[:2], tmp_path, "owners")


def test_two_results_of_one_run_are_one_launch(tmp_path: Path) -> None:
    same_run = [result(v, rid=f"r{i}", run="run1") for i, v in enumerate(LAUNCHES)]
    with pytest.raises(BaselineRefused, match="same run"):
        plan_update(same_run, tmp_path, "owners")


def test_results_of_other_work_do_not_mix(tmp_path: Path) -> None:
    mixed = [*launches()[:2], result([0.2, 0.2], rid="rx", run="runx", workload="1" * 64)]
    with pytest.raises(BaselineRefused, match="ran other work"):
        plan_update(mixed, tmp_path, "owners")


def test_an_update_shows_the_diff_and_keeps_owner_and_threshold(tmp_path: Path) -> None:
    plan_update(launches(), tmp_path, "owners").write()
    slower = tuple([v * 1.2 for v in values] for values in LAUNCHES)
    update = plan_update(launches("b", slower), tmp_path, None)
    assert update.new.owner == "owners"
    assert any(line.startswith("mean 0.2 -> 0.24 s (+20.0%)") for line in update.diff)
    assert any(line.startswith("evidence.result_id: 'r2' -> 'rb2'") for line in update.diff)


def test_another_serve_config_is_refused(tmp_path: Path) -> None:
    plan_update(launches(), tmp_path, "owners").write()
    with pytest.raises(BaselineRefused, match="another serve configuration"):
        plan_update(launches("b", serve="f" * 64), tmp_path, None)


def test_one_repetition_is_no_spread(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least 2"):
        plan_update(launches(values=([0.2], [0.2], [0.2])), tmp_path, None)


def test_the_hosts_reference_workload_is_kept_with_the_baseline(tmp_path: Path) -> None:
    host = {"probe_before_s": 0.0101, "probe_after_s": 0.0099, "probe_s": 0.0100,
            "steal_fraction": 0.0, "workload": "float32 matmul 64x64 + tanh"}  # fmt: skip
    update = plan_update(launches(host=host, reasons=[]), tmp_path, "owners")
    assert update.new.evidence.host_probe_s == pytest.approx(0.0100)
    assert update.new.evidence.host_probe_workload == "float32 matmul 64x64 + tanh"
    assert update.new.evidence.host_steal_fraction == 0.0
    assert update.new.evidence.launches[0].host_probe_s == pytest.approx(0.0100)


def test_a_result_from_an_unsteady_host_is_refused(tmp_path: Path) -> None:
    reasons = ["no baseline for this hardware/config: x does not exist",
               "host speed changed during the measurement: the reference workload took 10.0 ms "
               "before and 13.0 ms after (+30%, tolerance 5%)"]
    with pytest.raises(BaselineRefused, match=r"not steady \(host speed changed during"):
        plan_update(launches(reasons=reasons), tmp_path, "owners")


def test_a_result_with_hypervisor_steal_is_refused(tmp_path: Path) -> None:
    # Judged by an earlier baseline, its reason named the host's speed, not the steal.
    host = {"probe_s": 0.0100, "steal_fraction": 0.084, "workload": "w"}
    with pytest.raises(BaselineRefused, match=r"stole 8.4% of CPU time"):
        plan_update(launches(host=host, reasons=["host speed differs from the baseline's"]),
                    tmp_path, "owners")  # fmt: skip


def test_a_baseline_file_naming_one_launch_twice_is_rejected(tmp_path: Path) -> None:
    update = plan_update(launches(), tmp_path, "owners")
    data = update.new.model_dump(mode="json")
    data["evidence"]["launches"][1]["run_id"] = data["evidence"]["launches"][0]["run_id"]
    with pytest.raises(ValueError, match="names one run twice"):
        type(update.new).model_validate(data)


def test_a_run_of_several_launches_gives_as_many_baseline_launches(tmp_path: Path) -> None:
    per_run = [[{"launch": n + 1, "values": [v + 0.001 * n for v in values],
                 "host_probe_s": 0.010 + 0.0001 * n} for n in range(3)]
               for values in LAUNCHES]  # fmt: skip
    results = [result([x for launch in runs for x in launch["values"]], rid=f"r{i}",  # type: ignore[misc]
                      run=f"run{i}", minutes=10 * i, launches=runs, launches_per_run=3,
                      repetitions_per_launch=3, confidence=0.95)
               for i, runs in enumerate(per_run)]  # fmt: skip
    update = plan_update(results, tmp_path, "owners")
    launches = update.new.evidence.launches
    assert [(x.run_id, x.launch) for x in launches] == [
        (f"run{i}", n + 1) for i in range(3) for n in range(3)]  # fmt: skip
    assert launches[1].mean == pytest.approx(0.201) and launches[1].repetitions == 3
    assert launches[2].host_probe_s == pytest.approx(0.0102)
    assert update.new.resolution is not None
    assert update.new.resolution.launches_per_run == 3


def test_the_baseline_states_the_smallest_threshold_it_can_hold(tmp_path: Path) -> None:
    update = plan_update(launches(), tmp_path, "owners")
    stated = update.new.resolution
    assert stated is not None
    means = Spread.of([0.2, 0.201, 0.199])
    expected = resolution(means, within_sd=0.002, per_run=1, repetitions=3, confidence=0.95)
    assert stated.min_threshold == pytest.approx(expected, rel=1e-6)
    assert (stated.launches_per_run, stated.repetitions_per_launch) == (1, 3)
    assert stated.detects == pytest.approx(update.new.threshold + stated.min_threshold)


def test_a_threshold_below_what_the_spread_can_hold_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BaselineRefused, match=r"threshold 1% is below .* it can hold 3% or more"):
        plan_update(launches(), tmp_path, "owners", threshold=0.01)
    update = plan_update(launches(), tmp_path, "owners", threshold=0.05)
    assert update.new.threshold == 0.05


def test_a_kept_threshold_the_new_spread_cannot_hold_is_refused(tmp_path: Path) -> None:
    plan_update(launches(), tmp_path, "owners").write()
    wide = ([0.20, 0.22, 0.18], [0.26, 0.28, 0.24], [0.15, 0.17, 0.13])
    with pytest.raises(BaselineRefused, match="pass --threshold"):
        plan_update(launches("b", wide), tmp_path, None)


def _probed(cpu: str) -> dict[str, object]:
    return {"host": {"probe_s": 0.010, "steal_fraction": 0.0, "cpu_class": cpu,
                     "workload": "float32 matmul 64x64 + tanh, x400, one thread"}}  # fmt: skip


def test_a_probed_baseline_is_the_file_of_its_cpu_class(tmp_path: Path) -> None:
    update = plan_update(launches(**_probed("GenuineIntel x86_64 avx2")), tmp_path, "owners")
    assert update.path.name.endswith("__cpu-x86_64-2core-avx2__genuineintel-x86-64-avx2.yaml")
    update.write()
    assert load_baseline(update.path).evidence.host_cpu_class == "GenuineIntel x86_64 avx2"


def test_runs_on_two_cpu_classes_set_no_baseline(tmp_path: Path) -> None:
    mixed = [*launches(**_probed("GenuineIntel x86_64 avx2"))[:2],
             *launches("x", **_probed("AuthenticAMD x86_64 avx2"))[2:]]  # fmt: skip
    with pytest.raises(BaselineRefused, match="different CPU classes"):
        plan_update(mixed, tmp_path, "owners")
