"""The planner's prior for the perf gate: it launches its own server ``launches`` times, each a
start-up and a warm-up plus repetitions, so its prior holds that many start-ups, and the part
away from the host (those start-ups) is shared out as for any kind that shares them."""

from pathlib import Path

from omniqual.checks.perf import PerfCheck, PerfParams
from omniqual.domain.gate import GateSpec
from omniqual.engine.run.eta import GATE_PRIORS_S, STARTUP_PRIOR_S
from omniqual.specs.source import load_yaml

ROOT = Path(__file__).resolve().parents[3]


def test_the_perf_prior_holds_its_launches() -> None:
    spec = GateSpec.model_validate(load_yaml(ROOT / "gates" / "perf.yaml").data)
    launches = PerfParams.model_validate(spec.params).launches
    assert launches >= 3
    assert GATE_PRIORS_S["perf"] >= launches * STARTUP_PRIOR_S + 60.0
    assert PerfCheck.needs == "launches" and PerfCheck.shares_start_ups
