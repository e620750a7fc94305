"""fails-fast with scripted launch attempts: only an early refusal with a message naming the
restriction, repeated the same way on every attempt, passes; serving, hanging, failing slowly,
exiting 0, crashing unhelpfully or refusing differently each FAIL with the reason."""

import asyncio
import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from omniqual.checks.base import CheckContext, CheckOutcome, LaunchAttempt, TargetInfo
from omniqual.checks.fails_fast import FailsFastCheck, FailsFastParams
from omniqual.deploy.launcher import LAUNCH_MARKER, StartupOutcome
from omniqual.domain.axes import RowKey
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.recipe import Expectation, LaunchRecipe
from tests.fakes.memory_sink import MemorySink

RECIPE = LaunchRecipe.model_validate({
    "id": "sd3-tiny-step", "description": "step execution on SD3", "kind": "embedded",
    "pipeline": "sd3-tiny", "flags": {"step-execution": True}, "expect": "rejects",
    "expected_error": "step_execution=True requires a pipeline implementing",
    "readiness": {"timeout_s": 180},
})  # fmt: skip
PARAMS = FailsFastParams(deadline_s=30, actionable_patterns=(r"(?i)\brequires?\b",))
REFUSAL = (
    "INFO starting engine",
    "ValueError: step_execution=True requires a pipeline implementing prepare_encode;"
    " StableDiffusion3Pipeline does not support that contract. Remove --step-execution.",
)


def outcome_of(
    ready: bool, reason: str, elapsed: float, tail: tuple[str, ...], log: Path | None = None
) -> StartupOutcome:
    return StartupOutcome(
        recipe_id=RECIPE.id, expected=Expectation.REJECTS, became_ready=ready,
        reason=reason, exit_code=None if ready or reason == "timeout" else 1,  # type: ignore[arg-type]
        elapsed_s=elapsed, log_path=log, log_tail=tail,
        command=("vllm", "serve", "--api-key", "s3cret"),
        expected_error_matched=None,
    )  # fmt: skip


def run(
    startup: StartupOutcome | list[StartupOutcome],
    recipe: LaunchRecipe = RECIPE,
    params: FailsFastParams = PARAMS,
) -> tuple[CheckOutcome, MemorySink, list[LaunchRecipe]]:
    """Run the check; a single outcome answers every attempt, a list answers them in turn."""
    sink = MemorySink()
    launched: list[LaunchRecipe] = []
    queue = startup if isinstance(startup, list) else None

    async def attempt(given: LaunchRecipe) -> LaunchAttempt:
        launched.append(given)
        if queue is None:
            assert isinstance(startup, StartupOutcome)
            return LaunchAttempt(startup, None)
        return LaunchAttempt(queue[len(launched) - 1], None)

    ctx = CheckContext(
        gate=GateSpec(id="fails-fast", kind="fails_fast", version=1),
        row=RowKey((("model", "sd3-tiny"), ("execution", "step/1"))),
        target=TargetInfo(url=None, recipe=recipe, label=recipe.id),
        artifacts=sink, project_root=Path("."),
        make_client=lambda: (_ for _ in ()).throw(AssertionError("no client")),  # type: ignore[arg-type,return-value]
        launch_expecting_failure=attempt,
    )  # fmt: skip
    return asyncio.run(FailsFastCheck().run(ctx, params)), sink, launched


def test_fast_refusal_naming_the_restriction_passes() -> None:
    outcome, sink, launched = run(outcome_of(False, "exited", 9.5, REFUSAL))
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    (measurement,) = outcome.measurements
    assert (measurement.name, measurement.value, measurement.unit) == ("time_to_failure", 9.5, "s")
    assert measurement.bound == 30 and measurement.ok is True
    evidence = json.loads(sink.blobs["fail-fast-evidence.json"])
    for tried in evidence["attempts"]:
        assert tried["matched"]["expected_error"].startswith("ValueError: step_execution=True")
    assert "s3cret" not in json.dumps(evidence)
    # A proven refusal is what makes a row `unsupported`: it is evidence, not a startup smoke.
    assert not outcome.startup_only
    # The attempt is bounded near the deadline, not at the recipe's 180 s readiness timeout.
    assert launched[0].readiness.timeout_s == 40


def test_serving_is_a_silent_fallback_and_fails() -> None:
    outcome, _, _ = run(outcome_of(True, "ready", 12.0, ("INFO Application startup complete.",)))
    assert outcome.outcome is GateOutcome.FAILED
    assert outcome.reasons == (
        "sd3-tiny-step became ready after 12.0s and served: the restriction is not enforced"
        " (a silent fallback or a success, not a refusal)",
    )


def test_slow_failure_fails_even_with_the_right_message() -> None:
    outcome, _, _ = run(outcome_of(False, "exited", 95.0, REFUSAL))
    assert outcome.outcome is GateOutcome.FAILED
    assert outcome.reasons == (
        "sd3-tiny-step failed only after 95.0s, beyond the 30s deadline"
        " (a slow failure is not fail-fast)",
    )
    assert outcome.measurements[0].ok is False


def test_hang_fails() -> None:
    outcome, _, _ = run(outcome_of(False, "timeout", 40.0, ("INFO still loading",)))
    assert outcome.outcome is GateOutcome.FAILED
    assert "neither became ready nor exited within 40s: a hang" in outcome.reasons[0]


def test_unhelpful_message_fails_naming_the_regex_and_the_crash() -> None:
    tail = ("INFO starting engine", "RuntimeError: worker died")
    outcome, _, _ = run(outcome_of(False, "exited", 3.0, tail))
    assert outcome.outcome is GateOutcome.FAILED
    assert any(
        "does not match expected_error /step_execution=True requires a pipeline implementing/" in r
        and "'RuntimeError: worker died'" in r and "exit code 1" in r
        for r in outcome.reasons
    )
    # The unmatched regex is the one reason: there is no error line to hold to the patterns.
    assert len(outcome.reasons) == 1


def test_actionable_words_elsewhere_in_the_log_do_not_rescue_the_error() -> None:
    # The real SD3 log has "Model Runner V2 requires Triton" as a harmless warning.
    tail = ("WARNING Model Runner V2 requires Triton; using V1",
            "ValueError: step_execution=True requires a pipeline implementing X")  # fmt: skip
    params = FailsFastParams(deadline_s=30, actionable_patterns=(r"(?i)\bremove --step",))
    outcome, _, _ = run(outcome_of(False, "exited", 3.0, tail), params=params)
    assert outcome.outcome is GateOutcome.FAILED
    assert "so it is not actionable (error: 'ValueError: step_execution=True" in outcome.reasons[0]


def test_remedy_patterns_must_match_the_error_when_given() -> None:
    with_remedy = FailsFastParams(deadline_s=30, actionable_patterns=(r"(?i)\brequires?\b",),
                                  remedy_patterns=(r"(?i)\bremove --step-exec",))  # fmt: skip
    outcome, sink, _ = run(outcome_of(False, "exited", 3.0, REFUSAL), params=with_remedy)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert json.loads(sink.blobs["fail-fast-evidence.json"])["attempts"][0]["matched"][
        "remedy_patterns"
    ]
    without = ("ValueError: step_execution=True requires a pipeline implementing X",)
    outcome, _, _ = run(outcome_of(False, "exited", 3.0, without), params=with_remedy)
    assert outcome.outcome is GateOutcome.FAILED
    assert "so it names no remedy" in outcome.reasons[0]


def test_log_file_is_searched_beyond_the_tail(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("\n".join([REFUSAL[1], *["shutdown noise"] * 100]), encoding="utf-8")
    outcome, _, _ = run(outcome_of(False, "exited", 4.0, ("shutdown noise",), log))
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons


def test_a_recipe_seen_to_serve_is_tried_and_fails_for_serving() -> None:
    serves = RECIPE.model_copy(update={"expect": Expectation.SERVES, "expected_error": None})
    outcome, _, launched = run(outcome_of(True, "ready", 1.0, ()), recipe=serves)
    assert outcome.outcome is GateOutcome.FAILED and len(launched) == 1
    assert "served: the restriction is not enforced" in outcome.reasons[0]


def test_a_refusal_is_proven_only_by_two_attempts_refused_the_same_way() -> None:
    outcome, sink, launched = run(outcome_of(False, "exited", 9.5, REFUSAL))
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert len(launched) == 2 and outcome.measurements[0].samples == 2
    assert outcome.effective["refusals"] == 2
    assert len(json.loads(sink.blobs["fail-fast-evidence.json"])["attempts"]) == 2


def test_attempts_refused_differently_are_not_a_stable_restriction() -> None:
    other = ("ValueError: step_execution=True requires a pipeline implementing Y, not X",)
    first = outcome_of(False, "exited", 9.0, REFUSAL)
    second = outcome_of(False, "exited", 9.0, other)
    second = StartupOutcome(**{**{f: getattr(second, f) for f in second.__slots__},
                               "exit_code": 2})  # fmt: skip
    outcome, _, launched = run([first, second])
    assert outcome.outcome is GateOutcome.FAILED and len(launched) == 2
    assert "refused differently across 2 attempts" in outcome.reasons[0]
    assert "not a stable restriction" in outcome.reasons[0]


def test_a_second_attempt_that_crashes_otherwise_fails_with_its_crash() -> None:
    oom = ("INFO loading", "torch.OutOfMemoryError: cannot allocate 2.00 GiB", "INFO shutdown")
    outcome, _, launched = run([outcome_of(False, "exited", 9.0, REFUSAL),
                                outcome_of(False, "exited", 4.0, oom)])  # fmt: skip
    assert outcome.outcome is GateOutcome.FAILED and len(launched) == 2
    assert outcome.reasons[0].startswith("attempt 2: sd3-tiny-step server log does not match")
    assert "'torch.OutOfMemoryError: cannot allocate 2.00 GiB'" in outcome.reasons[0]


def test_exit_code_zero_is_never_a_refusal() -> None:
    clean = outcome_of(False, "exited", 2.0, REFUSAL)
    clean = StartupOutcome(**{**{f: getattr(clean, f) for f in clean.__slots__}, "exit_code": 0})
    outcome, _, launched = run(clean)
    assert outcome.outcome is GateOutcome.FAILED and len(launched) == 1
    assert outcome.reasons == (
        "sd3-tiny-step exited with code 0 after 2.0s: a clean exit is not a refusal",
    )


def test_a_crash_that_does_not_name_the_restriction_fails_with_the_crash() -> None:
    # "required" and "cannot" are actionable words, but the crash is an OOM, not the restriction.
    oom = ("INFO loading weights",
           "torch.OutOfMemoryError: cannot allocate 2.00 GiB; 3.1 GiB required",
           "INFO shutting down the engine", "INFO bye")  # fmt: skip
    outcome, _, launched = run(outcome_of(False, "exited", 5.0, oom))
    assert outcome.outcome is GateOutcome.FAILED and len(launched) == 1
    assert "the failure does not name the restriction" in outcome.reasons[0]
    assert "crash: 'torch.OutOfMemoryError: cannot allocate 2.00 GiB; 3.1 GiB required'" in (
        outcome.reasons[0]
    )


def test_without_expected_error_an_actionable_looking_crash_never_passes() -> None:
    # A recipe expected to serve declares no expected_error; an import crash mentioning
    # "required" used to pass as a refusal and make the row `unsupported`.
    serves = RECIPE.model_copy(update={"expect": Expectation.SERVES, "expected_error": None})
    crash = ("Traceback (most recent call last):",
             "ImportError: libcuda.so.1 is required but cannot be opened")  # fmt: skip
    outcome, _, launched = run(outcome_of(False, "exited", 3.0, crash), recipe=serves)
    assert outcome.outcome is GateOutcome.FAILED and len(launched) == 1
    assert outcome.reasons == (
        "sd3-tiny-step crashed (exit code 1) and declares no expected_error, so nothing names the"
        " restriction; the crash: 'ImportError: libcuda.so.1 is required but cannot be opened'",
    )


def test_a_log_reused_by_the_next_attempt_is_judged_per_attempt(tmp_path: Path) -> None:
    # The engine reuses one log file per recipe; attempt 2 must not borrow attempt 1's refusal.
    log = tmp_path / "attempt.log"
    log.write_text(f"{LAUNCH_MARKER}sd3-tiny-step at t1\n{REFUSAL[1]}\n", encoding="utf-8")
    first = outcome_of(False, "exited", 9.0, (), log)
    second_log = tmp_path / "attempt-2.log"
    crash = f"{LAUNCH_MARKER}sd3-tiny-step at t2\nImportError: no module named vllm_omni\n"
    second_log.write_text(log.read_text(encoding="utf-8") + crash, encoding="utf-8")
    outcome, _, _ = run([first, outcome_of(False, "exited", 1.0, (), second_log)])
    assert outcome.outcome is GateOutcome.FAILED
    assert "crash: 'ImportError: no module named vllm_omni'" in outcome.reasons[0]


def test_the_gate_needs_actionable_patterns() -> None:
    outcome, _, launched = run(outcome_of(False, "exited", 3.0, REFUSAL),
                               params=FailsFastParams(deadline_s=30))  # fmt: skip
    assert outcome.outcome is GateOutcome.INVALID and launched == []


def test_a_single_attempt_cannot_be_configured() -> None:
    with pytest.raises(ValidationError):
        FailsFastParams(actionable_patterns=("x",), attempts=1)
