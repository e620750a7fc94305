"""The fault-injection view: one line per case from the recorded summary, in run order."""

from datetime import UTC, datetime

from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.result import GateResult
from omniqual.report.fault_views import fault_case_lines


def _result(effective: dict[str, object]) -> GateResult:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    return GateResult.model_validate({
        "result_id": "r", "run_id": "run", "gate_id": "fault-injection", "gate_version": 1,
        "gate_kind": "fault_injection", "gate_spec_sha256": "0" * 64, "row": "model=m",
        "outcome": GateOutcome.FAILED, "target": "t", "command": [], "effective": effective,
        "started_at": now, "finished_at": now})  # fmt: skip


def test_one_line_per_case_with_what_the_client_saw_health_and_leaks() -> None:
    summary = {
        "encode-raise": {"outcome": "passed", "injected": "raise in encode",
                         "where": "pipeline_sd3:StableDiffusion3Pipeline.encode_prompt",
                         "client": "HTTP 500 with error envelope in 0.02 s",
                         "peers": "peers 2/2 succeeded", "health": "recovered in 0.3 s (HTTP 200)",
                         "restart_required": False, "policy": "recovers",
                         "leak": {"memory_mib": 0.97, "fds": 2, "temp_files": 0}},
        "worker-exit": {"outcome": "failed", "injected": "exit in denoise step 4", "where": "",
                        "client": "dropped after 0.51 s", "peers": "peers 0/2 succeeded",
                        "health": "exited ()", "restart_required": True, "policy": "recovers",
                        "leak": {}},
    }  # fmt: skip
    lines = fault_case_lines(_result({"fault_injection": summary}))
    assert lines == [
        "encode-raise [passed]: raise in encode at "
        "pipeline_sd3:StableDiffusion3Pipeline.encode_prompt; client saw HTTP 500 with error "
        "envelope in 0.02 s; peers 2/2 succeeded; server recovered in 0.3 s (HTTP 200) "
        "(policy recovers); memory +0.97 MiB, FDs +2, temp files +0",
        "worker-exit [failed]: exit in denoise step 4 at hook not reached; client saw dropped "
        "after 0.51 s; peers 0/2 succeeded; server exited (), restart required (policy "
        "recovers); leak not measured",
    ]


def test_a_result_without_the_summary_has_no_lines() -> None:
    assert fault_case_lines(_result({})) == []
