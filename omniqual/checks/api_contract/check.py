"""The ``api_contract`` check kind (SKILL Gate 0): freeze the official contract, reject the
neighbours. Loads the row's model contract, holds the served paths of ``GET /openapi.json``
against it, runs the rejections first (then proves they left no job, no temp file and a healthy
server), then the accepted boundaries, the log canaries and a finished async job's DELETE, then
sync/async parity; reads the captured server log last; and records every case, a raw-response
summary and the contract itself as evidence.

Declared deviations that reproduce come back as limitations (the gate passes, the row is at best
limited); a side-effect check that could not run makes the gate invalid, never a pass."""

import time
from fnmatch import fnmatchcase
from pathlib import Path

from pydantic import Field

from omniqual.checks.api_contract.canaries import LogWatch, canary_case, canary_cases
from omniqual.checks.api_contract.cases import Case, generate_cases, plan_cases
from omniqual.checks.api_contract.coverage import SERVICE_PATHS, check_coverage, openapi_document
from omniqual.checks.api_contract.exchange import Exchange, Timeouts, run_case
from omniqual.checks.api_contract.judge import Judgement, covering, judge, transport_failure
from omniqual.checks.api_contract.lifecycle import CASE_ID as LIFECYCLE_CASE
from omniqual.checks.api_contract.lifecycle import check_delete, server_environ, storage_dirs_for
from omniqual.checks.api_contract.parity import check_parity
from omniqual.checks.api_contract.pins import check_pins
from omniqual.checks.api_contract.public_fields import check_public_fields
from omniqual.checks.api_contract.record import RunRecord
from omniqual.checks.api_contract.side_effects import (
    TempSnapshot,
    health_status,
    job_case,
    served_release,
    temp_case,
    video_job_ids,
)
from omniqual.checks.api_contract.stability import StabilityRecord, error_class
from omniqual.checks.base import CheckContext, CheckOutcome, CheckParams
from omniqual.checks.lora.cases import REFUSALS, lora_case_id
from omniqual.checks.workload_budget import projected_past_budget
from omniqual.client import ClientError, OmniClient
from omniqual.domain.contract import ApiMode, EndpointContract, ModelContract, ParityPair
from omniqual.domain.evidence import Measurement
from omniqual.domain.outcomes import GateOutcome
from omniqual.specs.contracts import contract_path, load_contract


class ApiContractParams(CheckParams):
    contracts_dir: str = "gates/contracts"
    request_timeout_s: float = Field(default=120.0, gt=0)
    job_timeout_s: float = Field(default=300.0, gt=0)
    poll_interval_s: float = Field(default=0.25, gt=0)
    parity: bool = True
    temp_dirs: tuple[str, ...] = Field(
        default=(), description="The target's temp/upload dirs; empty skips the temp-file check."
    )
    release: str | None = Field(
        default=None, description="vLLM-Omni release for deviations; None asks GET /version."
    )
    api_modes: tuple[ApiMode, ...] | None = Field(
        default=None, description="Endpoints to test; None = the row's api_mode, else all."
    )
    storage_dirs: tuple[str, ...] = Field(
        default=(),
        description="Where the server stores finished videos; empty: its storage setting, read "
        "from the server process's environment (vLLM-Omni's default when unset).",
    )
    service_paths: tuple[str, ...] = Field(
        default=SERVICE_PATHS,
        description="Served paths of the server itself (health, metrics, docs ...), which no "
        "model contract owns; every other path of GET /openapi.json must be in the contract.",
    )


class ApiContractCheck:
    kind = "api_contract"
    params_model = ApiContractParams
    needs = "server"

    async def run(self, ctx: CheckContext, params: CheckParams) -> CheckOutcome:
        assert isinstance(params, ApiContractParams)
        model = ctx.row.get("model")
        if not model:
            return CheckOutcome(GateOutcome.SKIPPED, ("the row has no model axis value",))
        path = contract_path(ctx.project_root / params.contracts_dir, model)
        if not path.is_file():
            return CheckOutcome(GateOutcome.SKIPPED, (f"no contract for model {model!r}: {path}",))
        contract = load_contract(path)
        endpoints = select_endpoints(contract, ctx, params)
        task, mode = ctx.row.get("task"), ctx.row.get("api_mode")
        if not endpoints and params.api_modes is None and task and mode:
            why = (f"contract_task_missing: the row advertises task {task} on {mode}, but "
                   f"contract {path.name} declares no endpoint for it: every advertised task "
                   "has its endpoint, requests and output check in its contract "
                   "(SKILL G0-25)")  # fmt: skip
            return CheckOutcome(GateOutcome.FAILED, (why,))
        if not endpoints:
            why = f"contract {path.name} declares no endpoint for this row ({ctx.row})"
            return CheckOutcome(GateOutcome.SKIPPED, (why,))
        async with ctx.make_client() as client:
            run = _Run(ctx, params, contract, endpoints, client)
            return await run.execute(path)


def select_endpoints(
    contract: ModelContract, ctx: CheckContext, params: ApiContractParams
) -> tuple[EndpointContract, ...]:
    modes = params.api_modes
    if modes is None:
        row_mode = ctx.row.get("api_mode")
        modes = tuple(e.api_mode for e in contract.endpoints if row_mode in (None, e.api_mode))
    task = ctx.row.get("task") if params.api_modes is None else None
    return tuple(e for e in contract.endpoints if e.api_mode in modes and task in (None, e.task))


def unmatched_deviations(contract: ModelContract) -> list[str]:
    """A declared case pattern that names no case of the contract can never reproduce, so it
    could never go stale either: a typo would hide a deviation for good."""
    ids = [case.id for endpoint in contract.endpoints for case in generate_cases(endpoint)]
    # The field-effect gate judges the same contract's fields by these ids (a served default
    # declared to differ from the official one is its deviation).
    ids += [f"{endpoint.api_mode}/{kind}/{spec.name}" for endpoint in contract.endpoints
            for spec in endpoint.fields for kind in ("default", "effect")]  # fmt: skip
    # So does the lora gate its refusals of bad adapters (a release that answers one otherwise).
    ids += [lora_case_id(endpoint.api_mode, name) for endpoint in contract.endpoints
            for name in REFUSALS]  # fmt: skip
    return [
        f"declared deviation {index} ({deviation.release}): case pattern {pattern!r} names no "
        "case of the contract"
        for index, deviation in enumerate(contract.deviations)
        for pattern in deviation.cases
        if not any(fnmatchcase(case_id, pattern) for case_id in ids)
    ]


class _Run:
    """One gate run: the cases in their order, and what each found (``RunRecord``)."""

    def __init__(
        self,
        ctx: CheckContext,
        params: ApiContractParams,
        contract: ModelContract,
        endpoints: tuple[EndpointContract, ...],
        client: OmniClient,
    ) -> None:
        self.ctx, self.params, self.contract, self.client = ctx, params, contract, client
        self.endpoints = endpoints
        self.by_mode: dict[str, EndpointContract] = {e.api_mode: e for e in endpoints}
        self.timeouts = Timeouts(
            params.request_timeout_s, params.job_timeout_s, params.poll_interval_s
        )
        self.found = RunRecord(contract)
        self.unlisted: list[str] = []
        self.async_rejections = 0
        self.stability = StabilityRecord()
        self.release: str | None = params.release
        self.done = 0
        self.total = 0

    async def execute(self, contract_file: Path) -> CheckOutcome:
        started = time.perf_counter()
        if self.release is None:
            self.release = await served_release(self.client)
        if await health_status(self.client) != 200:
            return CheckOutcome(GateOutcome.INVALID, ("target is not healthy before the gate",))
        self.found.failures.extend(unmatched_deviations(self.contract))
        plan = plan_cases(self.endpoints)
        pairs = self._parity_pairs()
        log = LogWatch.begin(self.ctx.target.log_path)
        # Without a captured log nothing could show a canary: none is sent.
        canaries, carried = canary_cases(self.endpoints) if log.path else ((), ())
        lifecycle = int("videos-async" in self.by_mode)
        served = len(plan.accepted) + len(canaries) + lifecycle
        self.total = len(plan.rejected) + served + len(pairs) + 2
        given = [Path(d) for d in self.params.temp_dirs]
        temp_dirs = given or list(self.ctx.target.temp_dirs)
        temp_start = TempSnapshot.take(temp_dirs)
        accepted = list(plan.accepted)
        pure, declared_served = self._split_rejected(plan.rejected)
        self._progress("endpoint coverage (GET /openapi.json)")
        coverage = await check_coverage(self.client, self.contract, self.params.service_paths)
        self.found.checked(coverage.result, list(coverage.failures), list(coverage.invalid))
        pins = check_pins(self.contract, self.release, self.ctx.provenance,
                          self.ctx.target.recipe)  # fmt: skip
        self.found.checked(pins.result, list(pins.failures), [])
        document, _ = await openapi_document(self.client)  # unreadable: coverage says why
        public = check_public_fields(document, self.endpoints)
        self.found.checked(public.result, list(public.failures), [])
        # Negative cases before any positive request (SKILL G0-33): what is left after them is
        # theirs alone. Rejections the release is declared to serve are served requests: after.
        for case in pure:
            await self._rejected(case)
        self.found.checked(*self.stability.finish(self._declared), [])
        await self._side_effects_after_rejections(temp_dirs, temp_start)
        if self.ctx.gate.budget_s is not None:
            # The probe, timed, against every request this release serves from here on.
            probe, accepted = accepted[0], accepted[1:]
            too_slow = await self._calibrate(probe, declared_served, served + 1)
            if too_slow is not None:
                self.found.invalid.append(too_slow)
                return self._outcome(contract_file, started)
        for case in declared_served:
            await self._rejected(case, repeat=False)
        self._job_case()
        for case in (*accepted, *canaries):
            await self._one(case)
        if lifecycle:
            await self._delete_lifecycle()
        for pair in pairs:
            self._progress(f"parity {pair.a} ~ {pair.b}")
            parity = await check_parity(self.client, self.contract, pair, self.timeouts)
            self.found.records.extend(r for ex in parity.exchanges for r in ex.records)
            self.found.add(Judgement(parity.result, parity.failure))
        await self._final_checks(temp_dirs, temp_start)
        self.found.checked(*canary_case(log, carried))
        return self._outcome(contract_file, started)

    async def _delete_lifecycle(self) -> None:
        self._progress(LIFECYCLE_CASE)
        target = self.ctx.target
        # A pid on another host (an agent's) is no process here to read the environment of.
        environ = server_environ(target.pid) if target.agent is None else None
        dirs = storage_dirs_for(self.params.storage_dirs, environ)
        probe = generate_cases(self.by_mode["videos-async"])[0]
        checked = await check_delete(self.client, probe, dirs, self.timeouts)
        self.found.records.extend(checked.records)
        self.found.checked(checked.result, checked.failures, checked.invalid)

    def _declared(self, case_id: str) -> bool:
        return bool(covering(self.contract.deviations, self.release, case_id))

    def _split_rejected(self, rejected: tuple[Case, ...]) -> tuple[list[Case], list[Case]]:
        """(the rejections proper, those a declared deviation of this release says it serves)."""
        pure: list[Case] = []
        served: list[Case] = []
        for case in rejected:
            declared = covering(self.contract.deviations, self.release, case.id)
            (served if any(200 <= d.observed_status < 300 for d in declared) else pure).append(case)
        return pure, served

    async def _calibrate(self, probe: Case, rejected: list[Case], served: int) -> str | None:
        """Send the probe, timed; the reason the served requests still to come cannot fit the
        gate's budget (the accepted cases, ``rejected``: the declared deviations this release
        serves, the known-good one), or None."""
        sent = time.perf_counter()
        await self._one(probe)
        probe_s = time.perf_counter() - sent
        self.found.calibration = Measurement(
            name="probe_request", value=round(probe_s, 3), unit="s"
        )
        served += len(rejected)  # each a rejection this release is declared to serve
        return projected_past_budget(probe_s, served, self.ctx.gate.budget_s, "the probe request")

    def _parity_pairs(self) -> list[ParityPair]:
        if not self.params.parity:
            return []
        return [p for p in self.contract.parity if p.a in self.by_mode or p.b in self.by_mode]

    def _progress(self, message: str) -> None:
        self.done += 1
        self.ctx.progress(message, min(1.0, self.done / max(1, self.total)))

    async def _one(self, case: Case) -> Exchange | None:
        self._progress(case.id)
        try:
            exchange = await run_case(self.client, case, self.timeouts)
        except ClientError as exc:
            self.found.add(transport_failure(case, f"{type(exc).__name__}: {exc}"))
            return None
        self.found.records.extend(exchange.records)
        self.found.add(
            judge(
                case,
                exchange,
                self.by_mode[case.api_mode],
                deviations=self.contract.deviations,
                release=self.release,
            )
        )
        return exchange

    async def _rejected(self, case: Case, repeat: bool = True) -> None:
        if case.api_mode != "videos-async":
            await self._sent_twice(case, repeat)
            return
        self.async_rejections += 1
        before = await video_job_ids(self.client)
        await self._sent_twice(case, repeat)
        after = await video_job_ids(self.client)
        if before.ids is None or after.ids is None:
            self.unlisted.append(f"{case.id}: {before.unavailable or after.unavailable}")
            return
        if after.ids - before.ids:
            new = sorted(after.ids - before.ids)
            self.found.failures.append(
                f"creates_job_for_invalid_async: {case.id} ({case.sent}) was answered "
                f"{self.found.results[-1].observed_status} yet GET /v1/videos gained job(s) "
                f"{new[:3]}"
            )

    async def _sent_twice(self, case: Case, repeat: bool) -> None:
        """The case, judged; a rejection sent once more, its error class held to the first's
        (SKILL G0-07). An answer that served is not sent again (that would be a second
        generation, and the judge has it already)."""
        exchange = await self._one(case)
        if exchange is None or not repeat or exchange.response.ok:
            return
        first = error_class(exchange.response)
        try:
            again = await run_case(self.client, case, self.timeouts)
        except ClientError:
            self.stability.answered(case.id, first, None)
            return
        self.found.records.extend(again.records)
        self.stability.answered(case.id, first, error_class(again.response))

    def _job_case(self) -> None:
        """Whether the rejected async requests created jobs, as a recorded case."""
        if not self.async_rejections:
            return
        created = any(f.startswith("creates_job_for_invalid_async") for f in self.found.failures)
        result, invalid = job_case(self.async_rejections, self.unlisted, created)
        self.found.checked(result, [], invalid)

    async def _side_effects_after_rejections(self, dirs: list[Path], start: TempSnapshot) -> None:
        if not dirs:
            return
        left = TempSnapshot.take(dirs).new_since(start)
        if left:
            self.found.failures.append(
                f"leaves_temp_file: rejected requests left {len(left)} new "
                f"entr(y/ies) in the temp dirs: {left[:3]}"
            )

    async def _final_checks(self, dirs: list[Path], start: TempSnapshot) -> None:
        self._progress("health and known-good request")
        status = await health_status(self.client)
        if status != 200:
            self.found.failures.append(
                f"unhealthy_after_rejection: GET /health answered {status} after the cases"
            )
        known_good = plan_cases(self.endpoints[:1]).accepted[0]
        known_good = Case(
            f"after/{known_good.id}",
            known_good.api_mode,
            None,
            "known-good",
            known_good.values,
            "accepted",
            known_good.files,
            "the probe request, after all cases",
        )
        await self._one(known_good)
        self.done -= 1  # _one counted it again
        self.found.checked(*temp_case(dirs, start, TempSnapshot.take(dirs)))

    def _outcome(self, contract_file: Path, started: float) -> CheckOutcome:
        return self.found.outcome(
            sink=self.ctx.artifacts,
            contract_file=contract_file,
            elapsed_s=time.perf_counter() - started,
            requested={
                "model": self.contract.model,
                "release": self.release,
                "endpoints": [e.api_mode for e in self.endpoints],
            },
        )
