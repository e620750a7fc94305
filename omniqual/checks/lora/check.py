"""Gate kind ``lora``: a per-request LoRA adapter changes the output beyond the server's own
same-seed spread, gives the same output each time it is sent (also after another adapter took
its slot), at scale 0 gives the base output, and leaves nothing applied to the requests after it
or beside it; a request naming an adapter that is not there, or none, is refused with a 4xx and
leaves the server healthy. The steps are :mod:`omniqual.checks.lora.steps`.

The adapters are given by path on the server's host, or (embedded target) are the bundled ones
written beside the launched checkpoint (:mod:`omniqual.deploy.embedded.adapters`). The gate sends
``lora`` on ``/v1/images/generations``, whose JSON body takes it; other endpoints are skipped."""

import time
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import JsonValue

from omniqual.checks.api_contract.exchange import Timeouts
from omniqual.checks.api_contract.side_effects import health_status, served_release
from omniqual.checks.base import (
    CheckContext,
    CheckOutcome,
    CheckParams,
    KeptSink,
    TargetInfo,
    verdict,
)
from omniqual.checks.lora.cases import BROKEN
from omniqual.checks.lora.params import AdapterRef, LoraParams
from omniqual.checks.lora.steps import LoraRun, run_steps
from omniqual.checks.observed import observed
from omniqual.checks.soak.watch import ResourceWatch
from omniqual.deploy.embedded.adapters import bundled_adapters, bundled_broken_adapters
from omniqual.domain.evidence import Measurement
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.recipe import RecipeKind
from omniqual.specs.contracts import contract_path, load_contract

JSON_MODES = ("images-generations",)


class LoraCheck:
    kind: ClassVar[str] = "lora"
    params_model: ClassVar[type[CheckParams]] = LoraParams
    needs: ClassVar[Literal["server", "checkpoint", "launches"]] = "server"

    async def run(self, ctx: CheckContext, params: CheckParams) -> CheckOutcome:
        assert isinstance(params, LoraParams)
        model, api_mode = ctx.row.get("model"), ctx.row.get("api_mode")
        if not model:
            return CheckOutcome(GateOutcome.SKIPPED, ("the row has no model axis value",))
        if api_mode not in JSON_MODES:
            why = f"per-request LoRA is sent on {', '.join(JSON_MODES)} only, not {api_mode}"
            return CheckOutcome(GateOutcome.SKIPPED, (why,))
        path = contract_path(ctx.project_root / params.contracts_dir, model)
        if not path.is_file():
            return CheckOutcome(GateOutcome.SKIPPED, (f"no contract for model {model!r}: {path}",))
        contract = load_contract(path)
        endpoint = next((e for e in contract.endpoints if e.api_mode == api_mode), None)
        if endpoint is None:
            return CheckOutcome(GateOutcome.SKIPPED, (f"{path.name} has no {api_mode} endpoint",))
        adapters = params.adapters or _bundled(ctx.target)
        if len(adapters) < 2:
            why = ("no adapters: give two in params.adapters (paths on the server's host); "
                   "the bundled ones exist for the embedded target's SD3 only")  # fmt: skip
            return CheckOutcome(GateOutcome.SKIPPED, (why,))
        started = time.perf_counter()
        sink = KeptSink(ctx.artifacts)
        # What was applied, by sha256, where this host can read it (the bundled ones, or paths
        # on a server beside it): a changed adapter is another measurement.
        for adapter in adapters[:2]:
            for part in ADAPTER_FILES:
                file = Path(adapter.path) / part
                if file.is_file():
                    name = f"{adapter.name}/{part}"
                    sink.put_artifact(file, media_type="application/octet-stream",
                                      role="lora-adapter", name=name)  # fmt: skip
        async with (ctx.make_client() as client, ctx.make_client() as side,
                    observed(ctx.target, ()) as seen,
                    ResourceWatch(side, tree=seen.tree, watch_dirs=seen.watch_dirs,
                                  interval_s=1.0) as watch):  # fmt: skip
            if await health_status(client) != 200:
                return CheckOutcome(GateOutcome.INVALID, ("target is not healthy before the gate",))

            async def memory_bytes() -> int | None:
                return (await watch.snapshot()).memory_bytes

            given = {str(case): path for case, path in params.broken_adapters.items()}
            broken = given or _bundled_broken(ctx.target)
            run = LoraRun(
                client=client, endpoint=endpoint, adapters=adapters[:2], params=params,
                timeouts=Timeouts(params.request_timeout_s, params.job_timeout_s,
                                  params.poll_interval_s),
                sink=sink, deviations=contract.deviations,
                release=params.release or await served_release(client),
                progress=lambda message: ctx.progress(message, None), memory_bytes=memory_bytes,
                broken=broken,
            )  # fmt: skip
            await run_steps(run)
        elapsed = Measurement(name="elapsed_s", value=time.perf_counter() - started, unit="s")
        sent = Measurement(name="requests", value=run.requests, unit="count")
        names: list[JsonValue] = [adapter.name for adapter in adapters[:2]]
        contract_file = ctx.artifacts.put_artifact(
            path, media_type="application/yaml", role="contract", name=path.name
        )
        return CheckOutcome(
            outcome=verdict(run.failures, invalid=run.invalid),
            artifacts=(contract_file, *sink.stored.values()),
            reasons=(*run.failures, *run.invalid),
            measurements=(elapsed, sent, *run.measurements),
            cases=tuple(run.cases),
            requested={"model": contract.model, "endpoint": api_mode, "adapters": names},
            effective={"lora": run.pairs, "memory_source": watch.source,
                       "refusals_not_sent": [name for name in BROKEN if name not in broken]},
            limitations=tuple(run.limitations),
        )


ADAPTER_FILES = ("adapter_config.json", "adapter_model.safetensors")


def _embedded_checkpoint(target: TargetInfo) -> Path | None:
    """The launched checkpoint of the embedded target, else None: a user's own checkpoint (a
    command recipe) never gets random adapters written beside it."""
    recipe = target.recipe
    if recipe is None or recipe.kind is not RecipeKind.EMBEDDED:
        return None
    return target.checkpoint_dir


def _bundled(target: TargetInfo) -> tuple[AdapterRef, ...]:
    checkpoint = _embedded_checkpoint(target)
    bundled = bundled_adapters(checkpoint) if checkpoint is not None else ()
    return tuple(AdapterRef(name=a.name, path=str(a.path)) for a in bundled)


def _bundled_broken(target: TargetInfo) -> dict[str, str]:
    checkpoint = _embedded_checkpoint(target)
    broken = bundled_broken_adapters(checkpoint) if checkpoint is not None else {}
    return {case: str(adapter.path) for case, adapter in broken.items()}
