"""The start-up gate launches the row's recipe fresh and judges three things of it: it becomes
ready within the recipe's readiness deadline (else it fails with the log's last lines), the
known-good request sent the moment /health first said ready is answered within the bound (else
/health lied, named with both times), and that first request is not slower than the warm ones
beyond the ratio (else a cold first request, named with both latencies). On a fake launcher and
a virtual clock: each fault below breaks exactly one of them."""

from __future__ import annotations

from pathlib import Path

from omniqual.checks.base import CheckContext, CheckOutcome, TargetInfo
from omniqual.checks.startup import StartupCheck, StartupParams
from omniqual.domain.axes import RowKey
from omniqual.domain.evidence import Measurement
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.recipe import LaunchRecipe, Readiness
from tests.fakes.fake_config import FakeConfig, FakeFaults, LatencySpike
from tests.fakes.fake_launches import FakeLaunches
from tests.fakes.memory_sink import MemorySink
from tests.unit.loadgen.conftest import _run_virtual

ROOT = Path(__file__).resolve().parents[4]
ROW = RowKey((("model", "fake-omni"), ("task", "t2i"), ("api_mode", "images-generations")))
RECIPE = LaunchRecipe(id="fake-sd3", description="a launch recipe", kind="embedded",
                      pipeline="sd3-tiny", readiness=Readiness(timeout_s=180))  # fmt: skip
PARAMS = StartupParams(contracts_dir="tests/unit/checks/api_contract/contracts",
                       first_request_bound_s=30.0, warm_requests=5,
                       max_first_to_warm_ratio=3.0)  # fmt: skip
WORK_S = 0.2


def run(launcher: FakeLaunches, params: StartupParams = PARAMS, *,
        row: RowKey = ROW) -> tuple[CheckOutcome, MemorySink]:  # fmt: skip
    sink = MemorySink()
    ctx = CheckContext(
        gate=GateSpec(id="startup", kind="startup", version=1), row=row,
        target=TargetInfo(url=None, recipe=RECIPE, label=RECIPE.id), artifacts=sink,
        project_root=ROOT, make_client=lambda: None,  # type: ignore[arg-type,return-value]
        serve_point=launcher.serve,
    )  # fmt: skip
    return _run_virtual(StartupCheck().run(ctx, params)), sink


def served(spike: LatencySpike | None = None, **faults: object) -> FakeLaunches:
    faults_on = FakeFaults.model_validate({"latency_spike": spike, **faults})
    config = FakeConfig(image_work_s=WORK_S, faults=faults_on)
    return FakeLaunches(config=config, ready_s=12.0)


def measured(outcome: CheckOutcome, name: str) -> Measurement:
    return next(m for m in outcome.measurements if m.name == name)


def case(outcome: CheckOutcome, case_id: str) -> GateOutcome:
    return next(c.outcome for c in outcome.cases if c.id == case_id)


def test_a_server_that_serves_at_once_and_evenly_passes() -> None:
    launcher = served()
    outcome, _ = run(launcher)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert [r.id for r in launcher.launched] == ["fake-sd3-startup"]  # a fresh launch of its own
    ready = measured(outcome, "time_to_ready")
    assert (ready.value, ready.bound, ready.ok) == (12.0, 180.0, True)
    ratio = measured(outcome, "first_to_warm_ratio")
    assert ratio.value == 1.0 and ratio.samples == 5 and ratio.ok
    assert measured(outcome, "first_request").value == WORK_S
    assert measured(outcome, "warm_request_median").value == WORK_S
    assert {c.id: c.outcome for c in outcome.cases} == {
        "time-to-ready": GateOutcome.PASSED, "health-honest": GateOutcome.PASSED,
        "first-to-warm": GateOutcome.PASSED,
    }  # fmt: skip


def test_a_first_request_slower_within_the_ratio_passes() -> None:
    # 0.2 s of extra work for what arrives in the first 0.1 s after ready: 0.4 s against 0.2.
    outcome, _ = run(served(LatencySpike(start_s=0, duration_s=0.1, extra_s=0.2)))
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert measured(outcome, "first_to_warm_ratio").value == 2.0


def test_health_ready_before_the_server_can_serve_fails_naming_both_times() -> None:
    # /health says ready at 12 s; the first request then needs 100 s more.
    outcome, _ = run(served(LatencySpike(start_s=0, duration_s=1, extra_s=100)))
    assert outcome.outcome is GateOutcome.FAILED
    (reason,) = outcome.reasons
    assert "/health answered 200 12.0 s after spawn" in reason
    assert "no answer within the 30 s bound" in reason
    assert "42.0 s after spawn" in reason  # when the bound ran out
    assert case(outcome, "health-honest") is GateOutcome.FAILED
    assert case(outcome, "time-to-ready") is GateOutcome.PASSED
    assert measured(outcome, "ready_to_first_answer").ok is False


def test_health_ready_while_requests_are_refused_fails() -> None:
    outcome, _ = run(served(drops_requests=1))
    assert outcome.outcome is GateOutcome.FAILED
    (reason,) = outcome.reasons
    assert "/health answered 200 12.0 s after spawn" in reason
    assert "no answer (TargetProtocolError) 12.0 s after spawn" in reason


def test_a_cold_first_request_beyond_the_ratio_fails_naming_both_latencies() -> None:
    # What arrives in the first half second after ready takes 3 s more: 3.2 s against 0.2 s.
    outcome, _ = run(served(LatencySpike(start_s=0, duration_s=0.5, extra_s=3.0)))
    assert outcome.outcome is GateOutcome.FAILED
    (reason,) = outcome.reasons
    assert "first request took 3.20 s" in reason and "warm median 0.20 s" in reason
    assert "16.0x" in reason and "3x" in reason
    assert case(outcome, "health-honest") is GateOutcome.PASSED
    assert case(outcome, "first-to-warm") is GateOutcome.FAILED
    assert measured(outcome, "first_to_warm_ratio").ok is False


def test_too_few_warm_samples_is_invalid() -> None:
    # Every second POST is dropped: the first request is answered, then 2 of 5 warm ones.
    outcome, _ = run(served(drops_requests=2), PARAMS.model_copy(update={"min_warm_samples": 3}))
    assert outcome.outcome is GateOutcome.INVALID
    (reason,) = outcome.reasons
    assert "too few warm samples: 2 of 5" in reason
    assert case(outcome, "first-to-warm") is GateOutcome.INVALID


LOG = (
    "INFO api_server: vLLM-Omni startup complete",
    "INFO warmup: running a dummy generation (prompt='a secret cat')",
    "INFO using HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123 from the environment",
    "INFO warmup: denoise step 1/28",
)


def test_a_server_never_ready_fails_with_its_last_log_lines() -> None:
    outcome, sink = run(FakeLaunches(hangs=True, log=LOG))
    assert outcome.outcome is GateOutcome.FAILED
    (reason,) = outcome.reasons
    assert "never answered 200 on /health within the 180 s readiness deadline" in reason
    assert "vLLM-Omni startup complete" in reason and "denoise step 1/28" in reason
    assert "a secret cat" not in reason and "hf_abcdefghij" not in reason
    assert all(b"a secret cat" not in blob and b"hf_abcdefghij" not in blob
               for blob in sink.blobs.values())  # fmt: skip
    assert {c.id: c.outcome for c in outcome.cases} == {"time-to-ready": GateOutcome.FAILED}
    ready = measured(outcome, "time_to_ready")
    assert (ready.value, ready.bound, ready.ok) == (180.0, 180.0, False)


def test_no_recipe_to_launch_is_invalid() -> None:
    sink = MemorySink()
    ctx = CheckContext(
        gate=GateSpec(id="startup", kind="startup", version=1), row=ROW,
        target=TargetInfo(url="http://given.invalid"), artifacts=sink, project_root=ROOT,
        make_client=lambda: None,  # type: ignore[arg-type,return-value]
    )  # fmt: skip
    outcome = _run_virtual(StartupCheck().run(ctx, PARAMS))
    assert outcome.outcome is GateOutcome.INVALID
    assert "launch" in outcome.reasons[0]


def test_a_row_without_a_contract_is_skipped() -> None:
    row = RowKey((("model", "no-such-model"), ("api_mode", "images-generations")))
    launcher = served()
    outcome, _ = run(launcher, row=row)
    assert outcome.outcome is GateOutcome.SKIPPED
    assert launcher.launched == []
