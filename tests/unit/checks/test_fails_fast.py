"""fails-fast with scripted launch attempts: only an early refusal with a message naming the
restriction passes; serving, hanging, failing slowly or unhelpfully each FAIL with the reason."""

import asyncio
import json
from pathlib import Path

from omniqual.checks.base import CheckContext, CheckOutcome, LaunchAttempt, TargetInfo
from omniqual.checks.fails_fast import FailsFastCheck, FailsFastParams
from omniqual.deploy.launcher import StartupOutcome
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
    startup: StartupOutcome, recipe: LaunchRecipe = RECIPE, params: FailsFastParams = PARAMS
) -> tuple[CheckOutcome, MemorySink, list[LaunchRecipe]]:
    sink = MemorySink()
    launched: list[LaunchRecipe] = []

    async def attempt(given: LaunchRecipe) -> LaunchAttempt:
        launched.append(given)
        return LaunchAttempt(startup, None)

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
    assert evidence["matched"]["expected_error"].startswith("ValueError: step_execution=True")
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


def test_unhelpful_message_fails_naming_the_regex_and_last_line() -> None:
    tail = ("INFO starting engine", "RuntimeError: worker died")
    outcome, _, _ = run(outcome_of(False, "exited", 3.0, tail))
    assert outcome.outcome is GateOutcome.FAILED
    assert any(
        "does not match expected_error /step_execution=True requires a pipeline implementing/" in r
        and "'RuntimeError: worker died'" in r
        for r in outcome.reasons
    )
    assert any("matches none of actionable_patterns" in r for r in outcome.reasons)


def test_actionable_words_elsewhere_in_the_log_do_not_rescue_the_error() -> None:
    # The real SD3 log has "Model Runner V2 requires Triton" as a harmless warning.
    tail = ("WARNING Model Runner V2 requires Triton; using V1",
            "ValueError: step_execution=True requires a pipeline implementing X")  # fmt: skip
    params = FailsFastParams(deadline_s=30, actionable_patterns=(r"(?i)\bremove --step",))
    outcome, _, _ = run(outcome_of(False, "exited", 3.0, tail), params=params)
    assert outcome.outcome is GateOutcome.FAILED
    assert "so it is not actionable (error: 'ValueError: step_execution=True" in outcome.reasons[0]


def test_remedy_patterns_must_match_the_error_when_given() -> None:
    with_remedy = FailsFastParams(deadline_s=30, remedy_patterns=(r"(?i)\bremove --step-exec",))
    outcome, sink, _ = run(outcome_of(False, "exited", 3.0, REFUSAL), params=with_remedy)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert json.loads(sink.blobs["fail-fast-evidence.json"])["matched"]["remedy_patterns"]
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
