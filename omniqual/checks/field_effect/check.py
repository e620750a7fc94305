"""The ``field_effect`` check kind (SKILL G0-23 and G0-03): every model-specific field the row's
contract declares acts on the output, and the served defaults are the official ones.

Per endpoint of the row (its ``api_mode``, else every endpoint of the row's task): the probe is
sent twice with the same seed (the baseline: a server that does not reproduce it is invalid,
for nothing can be told from its own variation); each optional field that should change the
output is sent at a second legal value and must change it beyond that spread (else the gate fails
naming the field the server silently ignores); then the probe with its officially defaulted fields
left out is held against the same request stating them (else the gate fails naming each field
whose served default differs, found by stating one at a time). Every compared pair is a
measurement, and its outputs are stored and named by sha256."""

import time
from typing import ClassVar, Literal

from pydantic import Field

from omniqual.checks.api_contract.exchange import Timeouts
from omniqual.checks.api_contract.side_effects import health_status, served_release
from omniqual.checks.base import (
    CheckContext,
    CheckOutcome,
    CheckParams,
    KeptSink,
    verdict,
)
from omniqual.checks.field_effect.defaults import judge_defaults
from omniqual.checks.field_effect.effects import judge_effects
from omniqual.checks.field_effect.record import EndpointRecord, Findings
from omniqual.checks.field_effect.session import EndpointRun, Thresholds
from omniqual.client import OmniClient
from omniqual.domain.contract import ApiMode, Deviation, EndpointContract, ModelContract
from omniqual.domain.outcomes import GateOutcome
from omniqual.specs.contracts import contract_path, load_contract


class FieldEffectParams(CheckParams):
    contracts_dir: str = "gates/contracts"
    request_timeout_s: float = Field(default=300.0, gt=0)
    job_timeout_s: float = Field(default=600.0, gt=0)
    poll_interval_s: float = Field(default=0.25, gt=0)
    api_modes: tuple[ApiMode, ...] | None = Field(
        default=None, description="Endpoints to test; None = the row's api_mode, else all."
    )
    effects: bool = Field(default=True, description="Check each field's effect (G0-23).")
    defaults: bool = Field(default=True, description="Check the served defaults (G0-03).")
    reproducible_db: float = Field(
        default=30.0,
        gt=0,
        description="Two same-seed answers closer than this (PSNR, SNR for audio) count as one "
        "reproducible output; further apart, the server is not reproducible (invalid). 30 dB is "
        "parity's bound for outputs that match (vLLM-Omni's own Cache-DiT test).",
    )
    margin_db: float = Field(
        default=3.0,
        ge=0,
        description="How far beyond the baseline's own spread an effect must lie (dB).",
    )
    release: str | None = Field(
        default=None, description="vLLM-Omni release for the contract's declared deviations; "
        "None asks GET /version.",
    )  # fmt: skip


class FieldEffectCheck:
    kind: ClassVar[str] = "field_effect"
    params_model: ClassVar[type[CheckParams]] = FieldEffectParams
    needs: ClassVar[Literal["server", "checkpoint", "launches"]] = "server"

    async def run(self, ctx: CheckContext, params: CheckParams) -> CheckOutcome:
        assert isinstance(params, FieldEffectParams)
        model = ctx.row.get("model")
        if not model:
            return CheckOutcome(GateOutcome.SKIPPED, ("the row has no model axis value",))
        path = contract_path(ctx.project_root / params.contracts_dir, model)
        if not path.is_file():
            return CheckOutcome(GateOutcome.SKIPPED, (f"no contract for model {model!r}: {path}",))
        contract = load_contract(path)
        endpoints = _endpoints(contract, ctx, params)
        if not endpoints:
            why = f"contract {path.name} declares no endpoint for this row ({ctx.row})"
            return CheckOutcome(GateOutcome.SKIPPED, (why,))
        started = time.perf_counter()
        sink = KeptSink(ctx.artifacts)
        findings = Findings()
        async with ctx.make_client() as client:
            if await health_status(client) != 200:
                return CheckOutcome(GateOutcome.INVALID, ("target is not healthy before the gate",))
            release = params.release or await served_release(client)
            for endpoint in endpoints:
                await _one_endpoint(ctx, params, client, endpoint, sink, findings,
                                    contract.deviations, release)  # fmt: skip
        contract_file = ctx.artifacts.put_artifact(
            path, media_type="application/yaml", role="contract", name=path.name
        )
        return CheckOutcome(
            outcome=verdict(findings.failures, invalid=findings.invalid),
            reasons=(*findings.failures, *findings.invalid),
            measurements=findings.measurements(time.perf_counter() - started),
            artifacts=(contract_file, *sink.stored.values()),
            cases=tuple(findings.cases),
            requested={"model": contract.model, "endpoints": [e.api_mode for e in endpoints]},
            effective=findings.effective(),
            limitations=tuple(findings.limitations),
        )


def _endpoints(
    contract: ModelContract, ctx: CheckContext, params: FieldEffectParams
) -> tuple[EndpointContract, ...]:
    modes = params.api_modes
    if modes is None:
        row_mode = ctx.row.get("api_mode")
        modes = tuple(e.api_mode for e in contract.endpoints if row_mode in (None, e.api_mode))
    task = ctx.row.get("task") if params.api_modes is None else None
    return tuple(e for e in contract.endpoints if e.api_mode in modes and task in (None, e.task))


async def _one_endpoint(
    ctx: CheckContext,
    params: FieldEffectParams,
    client: OmniClient,
    endpoint: EndpointContract,
    sink: KeptSink,
    findings: Findings,
    deviations: tuple[Deviation, ...] = (),
    release: str | None = None,
) -> None:
    record = EndpointRecord(endpoint.api_mode, endpoint.output.kind)
    findings.endpoints.append(record)
    run = EndpointRun(
        client=client,
        endpoint=endpoint,
        timeouts=Timeouts(params.request_timeout_s, params.job_timeout_s, params.poll_interval_s),
        sink=sink,
        findings=findings,
        record=record,
        thresholds=Thresholds(params.reproducible_db, params.margin_db),
        progress=lambda message: ctx.progress(message, None),
        deviations=deviations,
        release=release,
    )
    baseline = await run.baseline()
    if baseline is None:
        return  # invalid, recorded: nothing is judged on a server that does not reproduce
    first, spread = baseline
    if params.effects:
        await judge_effects(run, first, spread)
    if params.defaults:
        await judge_defaults(run, spread)
