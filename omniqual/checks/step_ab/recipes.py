"""The two arms of a step-ab run, derived from the row's recipe: the step arm is the recipe as
it is; the control is the same recipe with the execution flags removed and nothing else changed
(the offload sweep derives its points the same way). Both get the params' readiness deadline."""

from omniqual.checks.step_ab.params import StepAbParams
from omniqual.domain.recipe import Expectation, FlagValue, LaunchRecipe


def _bounded(
    base: LaunchRecipe, suffix: str, flags: dict[str, FlagValue], deadline_s: float
) -> LaunchRecipe:
    readiness = base.readiness.model_copy(
        update={"timeout_s": min(base.readiness.timeout_s, deadline_s)}
    )
    return base.model_copy(update={"id": f"{base.id}--{suffix}", "flags": flags,
                                   "readiness": readiness, "expect": Expectation.SERVES,
                                   "expected_error": None})  # fmt: skip


def arm_recipes(
    base: LaunchRecipe, params: StepAbParams
) -> tuple[LaunchRecipe, LaunchRecipe] | str:
    """(step arm, request-mode control), or why the row has no step arm."""
    on = [f for f in params.execution_flags if base.flags.get(f) not in (None, False)]
    if not on:
        return (f"recipe {base.id} sets none of the execution flags "
                f"{list(params.execution_flags)}: it is no step-mode row")  # fmt: skip
    control = {k: v for k, v in base.flags.items() if k not in params.execution_flags}
    step = _bounded(base, "step-mode", dict(base.flags), params.startup_deadline_s)
    return step, _bounded(base, "request-mode", control, params.startup_deadline_s)
