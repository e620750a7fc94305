"""SL-03 live: the row's recipe started on a copy of its checkpoint without one tensor the
runtime retains must abort, naming the weight.

The copy (:mod:`doctored_copy`) is served by the row's own launch (command template, flags,
environment, readiness probe), pointed at the copy through ``{model}``, with a readiness deadline
of at most ``doctored_deadline_s``. Passed: the start-up exits or stays unready within the
deadline with an error line in its log naming the dropped weight (its pipeline name, its runtime
name or its checkpoint name). Failed: the server becomes ready (it loaded with a missing tensor:
a silent initialisation), or the start-up fails with nothing in its log naming the weight.
Absent, with the reason: a deployment given by URL, a command that does not take ``{model}``,
or no launches offered. Invalid: no retained parameter maps from exactly one tensor.
"""

import asyncio
import json
import re
import tempfile
from pathlib import Path

from pydantic import JsonValue

from omniqual.checks.base import CheckContext, LaunchAttempt
from omniqual.checks.fails_fast import crash_line
from omniqual.checks.strict_load.case_run import CaseRun, absent, outcome_of
from omniqual.checks.strict_load.doctored_copy import Victim, choose_victim, doctored_copy
from omniqual.checks.strict_load.mapping import ComponentResult
from omniqual.deploy.checkpoint_index import CheckpointInventory
from omniqual.deploy.launcher import LAUNCH_MARKER, StartupOutcome
from omniqual.deploy.runtime_params import RuntimeParamList
from omniqual.deploy.server_log import SEARCH_BYTES
from omniqual.domain.evidence import CaseResult, Measurement
from omniqual.domain.load_mapping import LoadMappingSpec
from omniqual.domain.recipe import Expectation, LaunchRecipe, RecipeKind
from omniqual.domain.redaction import redact_command, scrub_text

CASE = "doctored-startup"
_ENDPOINT = "start-up"
_EXPECTED = "start-up aborts, naming the missing weight"
# A line that reports a failure, as loaders word a missing weight ("were not initialized from
# checkpoint", "missing key", "KeyError"): a line merely listing the name (a debug dump of what
# loads) is no refusal.
_ERROR = re.compile(r"(?i)error|exception|missing|not (?:been )?(?:initiali[sz]ed|loaded|found)")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


def doctored_recipe(
    recipe: LaunchRecipe, checkpoint: Path, deadline_s: float, victim: Victim
) -> LaunchRecipe | str:
    """The row's own launch pointed at ``checkpoint``, or why it cannot be."""
    if recipe.kind is RecipeKind.URL:
        return ("the target is a deployment given by URL: omniqual cannot start it on a"
                " doctored copy of its checkpoint")  # fmt: skip
    template = recipe.argv_template()
    texts = [*template, *(v for v in recipe.flags.values() if isinstance(v, str))]
    if not any("{model}" in text for text in texts):
        return (f"recipe {recipe.id}'s command does not take {{model}}: it cannot be pointed at"
                " a doctored copy of its checkpoint")  # fmt: skip
    path = str(checkpoint)
    names = (victim.full_name, victim.parameter, victim.tensor)
    return LaunchRecipe(
        id=f"{recipe.id}-doctored",
        description=f"{recipe.id} on a copy of its checkpoint without {victim.tensor}",
        kind=RecipeKind.COMMAND,
        command=tuple(part.replace("{model}", path) for part in template),
        flags={k: v.replace("{model}", path) if isinstance(v, str) else v
               for k, v in recipe.flags.items()},
        env=recipe.effective_env(),
        readiness=recipe.readiness.model_copy(
            update={"timeout_s": min(recipe.readiness.timeout_s, deadline_s)}),
        stop=recipe.stop, row=dict(recipe.row), expect=Expectation.REJECTS,
        expected_error="|".join(re.escape(n) for n in dict.fromkeys(names)),
        devices=recipe.devices, cores=recipe.cores,
    )  # fmt: skip


def _launch_log(startup: StartupOutcome) -> str:
    """This launch's part of its log (a probe log may hold earlier launches), colours stripped."""
    text = ""
    if startup.log_path is not None:
        try:
            with startup.log_path.open("rb") as handle:
                handle.seek(0, 2)
                handle.seek(max(0, handle.tell() - SEARCH_BYTES))
                text = handle.read().decode("utf-8", errors="replace")
        except OSError:
            text = ""
        marker = text.rfind(LAUNCH_MARKER)
        text = text[marker:] if marker >= 0 else text
    return _ANSI.sub("", text or "\n".join(startup.log_tail))


def naming_lines(text: str, victim: Victim) -> list[str]:
    """Error lines that name the dropped weight as a whole name (``proj_out.weight`` does not
    match inside ``norm.proj_out.weight_scale``)."""
    names = "|".join(re.escape(n) for n in (victim.full_name, victim.parameter, victim.tensor))
    whole = re.compile(rf"(?<![\w.])(?:{names})(?!\w|\.\w)")
    lines = (line.strip() for line in text.splitlines())
    return [line for line in lines if whole.search(line) and _ERROR.search(line)]


async def doctored_startup(
    ctx: CheckContext,
    *,
    enabled: bool,
    deadline_s: float,
    inventory: CheckpointInventory,
    runtime: RuntimeParamList,
    results: list[ComponentResult],
    spec: LoadMappingSpec,
) -> CaseRun:
    recipe, root = ctx.target.recipe, ctx.target.checkpoint_dir
    if not enabled:
        return absent(CASE, _ENDPOINT, _EXPECTED, "switched off in the gate spec")
    if recipe is None or root is None:
        return absent(CASE, _ENDPOINT, _EXPECTED, "the target has no launch recipe")
    if recipe.kind is RecipeKind.URL or ctx.launch_expecting_failure is None:
        why = ("the target is a deployment given by URL: omniqual cannot start it on a doctored"
               " copy of its checkpoint") if recipe.kind is RecipeKind.URL else (
               "no launch is offered here (the engine gives this gate no launches)")  # fmt: skip
        return absent(CASE, _ENDPOINT, _EXPECTED, why)
    victim = choose_victim(runtime, results, inventory, spec)
    if victim is None:
        why = ("doctored start-up: no retained parameter of a component vLLM-Omni loads maps"
               " from exactly one checkpoint tensor, so there is nothing to drop")  # fmt: skip
        case = CaseResult(
            id=CASE, endpoint=_ENDPOINT, expected_status=_EXPECTED, observed_status="not run",
            outcome=outcome_of([], [why]), note=why,
        )  # fmt: skip
        return CaseRun(case, invalid=(why,), summary={"run": False, "reason": why})
    with tempfile.TemporaryDirectory(prefix="omniqual-doctored-") as scratch:
        # The copy keeps the checkpoint's directory name: some servers name the model by it.
        copy = Path(scratch) / root.name
        derived = doctored_recipe(recipe, copy, deadline_s, victim)
        if isinstance(derived, str):
            return absent(CASE, _ENDPOINT, _EXPECTED, derived)
        ctx.progress(f"starting {recipe.id} without {victim.tensor} (it must abort)", 0.6)
        await asyncio.to_thread(doctored_copy, root, copy, victim)
        attempt = await ctx.launch_expecting_failure(derived)
    return _judge(ctx, attempt, derived, victim, deadline_s)


def _judge(
    ctx: CheckContext, attempt: LaunchAttempt, derived: LaunchRecipe, victim: Victim,
    deadline_s: float,
) -> CaseRun:  # fmt: skip
    startup = attempt.startup
    text = _launch_log(startup)
    named = naming_lines(text, victim)
    code, elapsed = startup.exit_code, startup.elapsed_s
    failures: list[str] = []
    if startup.became_ready:
        observed = f"ready after {elapsed:.1f}s"
        failures.append(
            f"doctored start-up: {derived.id} became ready after {elapsed:.1f}s on a checkpoint"
            f" without {victim.tensor!r} (runtime {victim.full_name!r}): loaded with a missing"
            " tensor (a silent initialisation, not an abort)"
        )
    else:
        observed = f"{startup.reason} after {elapsed:.1f}s (exit code {code})"
        if not named:
            failures.append(
                f"doctored start-up: {derived.id} did not become ready ({observed}) but no"
                f" error in its log names the missing weight {victim.full_name!r}"
                f" (last error: {crash_line(text)!r})"
            )
    line = scrub_text(named[0])[:500] if named else None
    evidence = {
        "dropped": victim.describe(), "recipe": derived.id,
        "command": list(redact_command(startup.command)), "became_ready": startup.became_ready,
        "reason": startup.reason, "exit_code": code, "elapsed_s": elapsed,
        "deadline_s": derived.readiness.timeout_s, "named_by": line,
    }  # fmt: skip
    stored = ctx.artifacts.put_artifact(
        json.dumps(evidence, indent=1).encode("utf-8"), media_type="application/json",
        role=CASE, name=f"{CASE}.json",
    )  # fmt: skip
    logs = (attempt.log_artifact,) if attempt.log_artifact is not None else ()
    outcome = outcome_of(failures, [])
    case = CaseResult(id=CASE, endpoint=_ENDPOINT, sent=f"checkpoint without {victim.tensor}",
                      expected_status=_EXPECTED, observed_status=observed, outcome=outcome,
                      note=line or (failures[0] if failures else ""))  # fmt: skip
    measurement = Measurement(name="doctored_time_to_abort", value=elapsed, unit="s",
                              bound=min(deadline_s, derived.readiness.timeout_s),
                              ok=not failures)  # fmt: skip
    summary: dict[str, JsonValue] = {"run": True, "dropped": victim.full_name,
                                     "observed": observed, "named_by": line}  # fmt: skip
    return CaseRun(case, tuple(failures), measurements=(measurement,),
                   artifacts=(stored, *logs), summary=summary)  # fmt: skip
