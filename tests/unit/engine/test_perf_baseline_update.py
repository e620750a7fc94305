"""`perf baseline update`: a baseline from a recorded perf result, with a diff for review; it
refuses to replace the baseline of another serve configuration."""

from datetime import UTC, datetime
from pathlib import Path

import pytest

from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.result import GateResult
from omniqual.engine.perf_baseline import BaselineRefused, plan_update
from omniqual.specs.perf_baseline import load_baseline

ROW = "model=sd3-tiny;api_mode=images-generations;execution=serial/1;hardware=cpu-x86_64-2core-avx2"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def result(values: list[float], serve: str = "a" * 64, rid: str = "r1",
           **extra: object) -> GateResult:  # fmt: skip
    perf = {**extra, "metric": "latency_mean", "values": values, "workload_sha256": "0" * 64,
            "hardware": "cpu-x86_64-2core-avx2",
            "serve": {"recipe": "sd3-tiny", "serve_config_sha256": serve,
                      "checkpoint_sha256": "c" * 64}}  # fmt: skip
    return GateResult(result_id=rid, run_id="run1", gate_id="perf", gate_version=1,
                      gate_kind="perf", row=ROW, outcome=GateOutcome.INVALID, target="sd3-tiny",
                      effective={"perf": perf}, started_at=T0, finished_at=T0)  # fmt: skip


def test_a_first_baseline_is_written_from_the_repetitions(tmp_path: Path) -> None:
    update = plan_update(result([0.2, 0.22, 0.18]), tmp_path, "owners")
    assert update.old is None and update.diff[0].startswith("new baseline: latency_mean mean 0.2")
    update.write()
    written = load_baseline(update.path)
    assert update.path.name.endswith("__cpu-x86_64-2core-avx2.yaml")
    assert written.evidence.repetitions == (0.2, 0.22, 0.18)
    assert written.evidence.mean == pytest.approx(0.2) and written.owner == "owners"
    assert written.direction == "lower" and written.threshold == 0.10


def test_an_update_shows_the_diff_and_keeps_owner_and_threshold(tmp_path: Path) -> None:
    plan_update(result([0.2, 0.22, 0.18]), tmp_path, "owners").write()
    update = plan_update(result([0.24, 0.25, 0.23], rid="r2"), tmp_path, None)
    assert update.new.owner == "owners"
    assert any(line.startswith("mean 0.2 -> 0.24 s (+20.0%)") for line in update.diff)
    assert any(line.startswith("evidence.result_id: 'r1' -> 'r2'") for line in update.diff)


def test_another_serve_config_is_refused(tmp_path: Path) -> None:
    plan_update(result([0.2, 0.22, 0.18]), tmp_path, "owners").write()
    with pytest.raises(BaselineRefused, match="another serve configuration"):
        plan_update(result([0.1, 0.1, 0.1], serve="f" * 64), tmp_path, None)


def test_one_repetition_is_no_spread(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least 2"):
        plan_update(result([0.2]), tmp_path, None)


def test_the_hosts_reference_workload_is_kept_with_the_baseline(tmp_path: Path) -> None:
    host = {"probe_before_s": 0.0101, "probe_after_s": 0.0099, "probe_s": 0.0100,
            "steal_fraction": 0.0, "workload": "float32 matmul 64x64 + tanh"}  # fmt: skip
    update = plan_update(result([0.2, 0.22, 0.18], host=host, reasons=[]), tmp_path, "owners")
    assert update.new.evidence.host_probe_s == pytest.approx(0.0100)
    assert update.new.evidence.host_probe_workload == "float32 matmul 64x64 + tanh"
    assert update.new.evidence.host_steal_fraction == 0.0


def test_a_result_from_an_unsteady_host_is_refused(tmp_path: Path) -> None:
    reasons = ["no baseline for this hardware/config: x does not exist",
               "host speed changed during the measurement: the reference workload took 10.0 ms "
               "before and 13.0 ms after (+30%, tolerance 5%)"]
    with pytest.raises(BaselineRefused, match=r"not steady \(host speed changed during"):
        plan_update(result([0.2, 0.22, 0.18], reasons=reasons), tmp_path, "owners")
