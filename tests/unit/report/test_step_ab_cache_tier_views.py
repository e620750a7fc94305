"""The step-ab and cache-tiers views: table rows and sentences from the recorded blocks."""

from datetime import UTC, datetime

from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.result import GateResult
from omniqual.report.cache_tier_views import cache_engages, cache_point_rows, cache_tier_rows
from omniqual.report.step_ab_views import step_ab_rows, step_ab_summary


def _result(kind: str, effective: dict[str, object]) -> GateResult:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    return GateResult.model_validate({
        "result_id": "r", "run_id": "run", "gate_id": kind, "gate_version": 1,
        "gate_kind": kind, "gate_spec_sha256": "0" * 64, "row": "model=m",
        "outcome": GateOutcome.PASSED, "target": "t", "command": [], "effective": effective,
        "started_at": now, "finished_at": now})  # fmt: skip


STEP_AB = {"hypothesis": "cancel_frees_within_step", "min_improvement": 0.2,
           "recipes": {"step": "q--step-mode", "request": "q--request-mode"},
           "arms": {"step": [{"value": 0.3}, {"value": 0.32}],
                    "request": [{"value": 1.0}, {"value": 1.1}]},
           "comparison": {"change": -0.7, "low": -0.75, "high": -0.65, "decision": "within"},
           "recommendation": "step mode may be recommended", "reasons": []}  # fmt: skip


def test_step_ab_rows_and_summary() -> None:
    result = _result("step_ab", {"step_ab": STEP_AB})
    assert step_ab_rows(result) == [
        ("step", "q--step-mode", "2", "0.300, 0.320", "0.310"),
        ("request", "q--request-mode", "2", "1.000, 1.100", "1.050"),
    ]
    assert step_ab_summary(result) == (
        "cancel_frees_within_step: step mode -70.0% against request mode, interval "
        "[-75.0%, -65.0%], needed -20% or better: within; step mode may be recommended"
    )
    assert step_ab_rows(_result("step_ab", {})) == [] and step_ab_summary(
        _result("step_ab", {})) == ""  # fmt: skip


def test_cache_tier_rows() -> None:
    block = {"points": [
        {"name": "lossless", "settings": {}, "status": "lossless", "latency_s": 0.3,
         "psnr_db": None, "identical": True, "ssim": 1.0, "cached_steps": 0},
        {"name": "rdt-024", "settings": {"backend": "cache_dit", "residual_diff_threshold": 0.24},
         "status": "active", "latency_s": 0.2, "psnr_db": 33.5, "ssim": 0.95,
         "cached_steps": 12, "first_cached_step": 2}],
        "frontier": ["rdt-024"],
        "tiers": {"lossless": {"point": "lossless", "why": "no cache"},
                  "high": {"point": "rdt-024", "why": "fastest"}},
        "engages": "rdt-024: first cached step 2"}  # fmt: skip
    result = _result("cache_tiers", {"cache_tiers": block})
    assert cache_point_rows(result) == [
        ("lossless", "-", "lossless", "0.300", "identical", "1.000", "0", "-", "no"),
        (
            "rdt-024",
            "backend=cache_dit, residual_diff_threshold=0.24",
            "active",
            "0.200",
            "33.5",
            "0.950",
            "12",
            "2",
            "yes",
        ),
    ]
    assert cache_tier_rows(result) == [("lossless", "lossless", "no cache"),
                                       ("high", "rdt-024", "fastest")]  # fmt: skip
    assert cache_engages(result) == "rdt-024: first cached step 2"
    assert cache_point_rows(_result("cache_tiers", {})) == []
