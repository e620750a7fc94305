"""Run one gate on one row against one target and record the result as it happens."""

import asyncio
import json
import traceback
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pydantic import JsonValue, ValidationError

from omniqual.checks.base import (
    Check,
    CheckContext,
    CheckOutcome,
    CheckParams,
    LaunchAttempt,
    PointLaunch,
    ServedReference,
    TargetInfo,
)
from omniqual.checks.registry import measures, resolve, shares_start_ups
from omniqual.checks.workload_budget import budget_measurement, budget_spent
from omniqual.client.client import OmniClient
from omniqual.domain.axes import RowKey
from omniqual.domain.evidence import Artifact, ErrorInfo
from omniqual.domain.log_proof import LogProof
from omniqual.domain.matrix import RestartPolicy
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.provenance import Provenance
from omniqual.domain.recipe import LaunchRecipe
from omniqual.domain.redaction import redact_command
from omniqual.domain.result import GateResult
from omniqual.engine.run import host_share
from omniqual.engine.run.events import GateFinished, GateProgress, GateStarted, Observer, ignore
from omniqual.engine.run.launch_logs import LaunchWatch, held_to_the_logs
from omniqual.evidence.store import RunWriter
from omniqual.specs.gates import LoadedGate
from omniqual.specs.source import SpecError, load_yaml


@dataclass(frozen=True, slots=True)
class GateJob:
    gate: LoadedGate
    row: RowKey
    target: TargetInfo
    provenance: Provenance
    artifacts: tuple[Artifact, ...] = ()
    """Artifacts of the target rather than of the check (the launch's deploy config files)."""
    restart_policy: RestartPolicy = RestartPolicy.RECOVERS
    log_proofs: tuple[LogProof, ...] = ()
    """The row's axes its server's log must show resolved as declared (attention backend)."""


def check_params(gate: LoadedGate) -> CheckParams:
    """Validate a gate's ``params`` against its check kind, with file:line on failure."""
    try:
        check = resolve(gate.spec.kind)
    except ValueError as exc:
        doc = load_yaml(gate.path)
        raise SpecError([doc.problem(("kind",), str(exc))]) from None
    try:
        return check.params_model.model_validate(gate.spec.params)
    except ValidationError as exc:
        doc = load_yaml(gate.path)
        raise SpecError(
            doc.problem(("params", *e["loc"]), e["msg"]) for e in exc.errors(include_url=False)
        ) from None


async def run_gate(
    job: GateJob,
    writer: RunWriter,
    *,
    project_root: Path,
    command: Sequence[str],
    launch_expecting_failure: Callable[[LaunchRecipe], Awaitable[LaunchAttempt]] | None = None,
    observe: Observer = ignore,
    seed: int = 0,
    serve_reference: Callable[[RowKey], AbstractAsyncContextManager[ServedReference]] | None = None,
    serve_point: Callable[[LaunchRecipe], AbstractAsyncContextManager[PointLaunch]] | None = None,
) -> GateResult:
    spec = job.gate.spec
    params = check_params(job.gate)
    check = resolve(spec.kind)()
    target = job.target

    def make_client() -> OmniClient:
        if target.url is None:
            raise RuntimeError(f"gate {spec.id} needs a served target, and this one has no URL")
        return OmniClient(target.url, api_key=target.api_key)

    # The latest progress (message, fraction): what a spent budget reports reaching.
    last: list[tuple[str, float | None]] = [("", None)]

    def progressed(message: str, fraction: float | None) -> None:
        last[0] = (message, fraction)
        observe(GateProgress(spec.id, message, fraction))

    # Every server the gate launches itself is held to the row's log proofs as its target is.
    watch = LaunchWatch()
    ctx = CheckContext(
        gate=spec,
        row=job.row,
        target=target,
        artifacts=writer,
        project_root=project_root,
        make_client=make_client,
        launch_expecting_failure=watch.attempts(launch_expecting_failure),
        serve_reference=serve_reference,
        serve_point=watch.points(serve_point),
        progress=progressed,
        seed=seed,
        provenance=job.provenance,
        restart_policy=job.restart_policy,
    )
    # Beside other launch groups (--jobs), a gate is an activity on the shared host; one that
    # measures time or memory waits for the host to itself and keeps it until it ends, apart
    # from its own server start-ups when its kind shares them (see host_share.start_up).
    recipe = target.recipe.id if target.recipe is not None else None
    kind = type(check)
    # Its target is what it measures: the servers up beside it are paused, never that one.
    spare = frozenset({target.pid}) if target.pid is not None else frozenset[int]()
    async with host_share.activity(f"{spec.id} on {job.row}", recipe=recipe,
                                   exclusive=measures(kind),
                                   shares_start_ups=shares_start_ups(kind),
                                   spare=spare) as held:  # fmt: skip
        observe(GateStarted(spec.id, str(job.row)))
        started = datetime.now(UTC)
        outcome, error = await _checked(check, ctx, params, last)
        placement = host_share.evidence(held)
    outcome, served_as = held_to_the_logs(outcome, job.log_proofs, target, watch)
    result = GateResult(
        result_id=uuid.uuid4().hex,
        run_id=writer.run_id,
        gate_id=spec.id,
        gate_version=spec.version,
        gate_kind=spec.kind,
        gate_spec_sha256=job.gate.sha256,
        row=str(job.row),
        outcome=outcome.outcome,
        reasons=outcome.reasons,
        limitations=outcome.limitations,
        # startup_only stays False: whether a gate promotes a row is the matrix's `requires` /
        # `unsupported_by`, so a second, per-result switch would only hide evidence.
        target=target.label or target.url or "",
        command=redact_command(command),
        requested=json_ready(outcome.requested),
        effective=json_ready({**outcome.effective, **placement, **served_as}),
        measurements=outcome.measurements,
        artifacts=(*outcome.artifacts, *job.artifacts),
        cases=outcome.cases,
        provenance=job.provenance,
        error=error,
        started_at=started,
        finished_at=datetime.now(UTC),
    )
    writer.record(result)
    observe(GateFinished(result))
    return result


def json_ready(values: Mapping[str, object]) -> dict[str, JsonValue]:
    """``values`` as JSON values: a check's tuples become lists and anything else JSON has no
    type for (a path) its text, so a settings record never costs the result it belongs to."""
    loaded: dict[str, JsonValue] = json.loads(json.dumps(dict(values), default=str))
    return loaded


async def _checked(
    check: Check, ctx: CheckContext, params: CheckParams, last: list[tuple[str, float | None]]
) -> tuple[CheckOutcome, ErrorInfo | None]:
    """The check's outcome; a spent budget is invalid and an escaped exception errored."""
    spec = ctx.gate
    try:
        # Only a gate that talks to a server already up is stopped where it is: one that
        # launches servers (in threads) calibrates against its budget instead.
        if spec.budget_s is None or check.needs != "server":
            return await check.run(ctx, params), None
        running = asyncio.ensure_future(check.run(ctx, params))
        try:
            finished, _ = await asyncio.wait({running}, timeout=spec.budget_s)
        except BaseException:  # the run itself is stopped: the check goes with it
            running.cancel()
            raise
        if not finished:
            # Stopped where it was (its clients close as it unwinds). A TimeoutError the check
            # raises itself is its own fault, never a spent budget: only this path says so.
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)
            reason = budget_spent(spec.budget_s, *last[0])
            measured = (budget_measurement(spec.budget_s),)
            return CheckOutcome(GateOutcome.INVALID, (reason,), measurements=measured), None
        return running.result(), None
    except Exception as exc:  # a harness fault is recorded as data, never lost
        error = ErrorInfo(
            type=type(exc).__name__, message=str(exc), traceback=traceback.format_exc()
        )
        return CheckOutcome(GateOutcome.ERRORED, (f"{type(exc).__name__}: {exc}",)), error
