"""The ``api_contract`` check kind (SKILL Gate 0): freeze the official contract, reject the
neighbours. Loads the row's model contract, runs the rejections first (then proves they left no
job, no temp file and a healthy server), then the accepted boundaries, then sync/async parity,
and records every case, a raw-response summary and the contract itself as evidence.

Declared deviations that reproduce come back as limitations (the gate passes, the row is at best
limited); a side-effect check that could not run makes the gate invalid, never a pass."""

import json
import logging
import time
from fnmatch import fnmatchcase
from pathlib import Path

from pydantic import Field

from omniqual.checks.api_contract.cases import Case, generate_cases, plan_cases
from omniqual.checks.api_contract.exchange import ExchangeRecord, Timeouts, run_case
from omniqual.checks.api_contract.judge import Judgement, judge, transport_failure
from omniqual.checks.api_contract.parity import check_parity
from omniqual.checks.api_contract.side_effects import (
    TempSnapshot,
    health_status,
    job_case,
    served_release,
    temp_case,
    video_job_ids,
)
from omniqual.checks.base import CheckContext, CheckOutcome, CheckParams, verdict
from omniqual.checks.workload_budget import projected_past_budget
from omniqual.client import ClientError, OmniClient
from omniqual.domain.contract import ApiMode, EndpointContract, ModelContract, ParityPair
from omniqual.domain.evidence import Artifact, CaseResult, Measurement
from omniqual.domain.outcomes import GateOutcome
from omniqual.specs.contracts import contract_path, load_contract

logger = logging.getLogger(__name__)
MAX_REASONS = 60


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
    return [
        f"declared deviation {index} ({deviation.release}): case pattern {pattern!r} names no "
        "case of the contract"
        for index, deviation in enumerate(contract.deviations)
        for pattern in deviation.cases
        if not any(fnmatchcase(case_id, pattern) for case_id in ids)
    ]


class _Run:
    """One gate run's state: cases judged so far, failures, exchanges for the artifacts."""

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
        self.results: list[CaseResult] = []
        self.failures: list[str] = []
        self.invalid: list[str] = []
        """Checks the gate needed that could not run: the verdict is invalid, not passed."""
        self.reproduced: dict[int, list[CaseResult]] = {}
        """Declared deviations (index in the contract) and the cases that reproduced them."""
        self.unlisted: list[str] = []
        self.async_rejections = 0
        self.records: list[ExchangeRecord] = []
        self.release: str | None = params.release
        self.done = 0
        self.total = 0
        self.calibration: Measurement | None = None

    async def execute(self, contract_file: Path) -> CheckOutcome:
        started = time.perf_counter()
        if self.release is None:
            self.release = await served_release(self.client)
        if await health_status(self.client) != 200:
            return CheckOutcome(GateOutcome.INVALID, ("target is not healthy before the gate",))
        self.failures.extend(unmatched_deviations(self.contract))
        plan = plan_cases(self.endpoints)
        pairs = self._parity_pairs()
        self.total = len(plan.rejected) + len(plan.accepted) + len(pairs) + 1
        given = [Path(d) for d in self.params.temp_dirs]
        temp_dirs = given or list(self.ctx.target.temp_dirs)
        temp_start = TempSnapshot.take(temp_dirs)
        accepted = list(plan.accepted)
        if self.ctx.gate.budget_s is not None:
            # Calibrate first: the probe, timed, against every request this release serves.
            probe, accepted = accepted[0], accepted[1:]
            too_slow = await self._calibrate(probe, plan.rejected, len(plan.accepted) + 1)
            if too_slow is not None:
                return self._outcome(contract_file, time.perf_counter() - started, too_slow)
        for case in plan.rejected:
            await self._rejected(case)
        self._job_case()
        await self._side_effects_after_rejections(temp_dirs, temp_start)
        for case in accepted:
            await self._one(case)
        for pair in pairs:
            self._progress(f"parity {pair.a} ~ {pair.b}")
            parity = await check_parity(self.client, self.contract, pair, self.timeouts)
            self.records.extend(r for ex in parity.exchanges for r in ex.records)
            self._add(Judgement(parity.result, parity.failure))
        await self._final_checks(temp_dirs, temp_start)
        return self._outcome(contract_file, time.perf_counter() - started)

    async def _calibrate(self, probe: Case, rejected: tuple[Case, ...], served: int) -> str | None:
        """Send the probe, timed; the reason the served requests cannot fit the gate's budget
        (the accepted cases, the declared deviations this release serves, the known-good one),
        or None."""
        sent = time.perf_counter()
        await self._one(probe)
        probe_s = time.perf_counter() - sent
        self.calibration = Measurement(name="probe_request", value=round(probe_s, 3), unit="s")
        patterns = [p for d in self.contract.deviations for p in d.cases]
        served += sum(any(fnmatchcase(c.id, p) for p in patterns) for c in rejected)
        return projected_past_budget(probe_s, served, self.ctx.gate.budget_s, "the probe request")

    def _parity_pairs(self) -> list[ParityPair]:
        if not self.params.parity:
            return []
        return [p for p in self.contract.parity if p.a in self.by_mode or p.b in self.by_mode]

    def _progress(self, message: str) -> None:
        self.done += 1
        self.ctx.progress(message, min(1.0, self.done / max(1, self.total)))

    def _add(self, judgement: Judgement) -> None:
        self.results.append(judgement.result)
        if judgement.failure is not None:
            self.failures.append(judgement.failure)
        if judgement.deviation is not None:
            index = self.contract.deviations.index(judgement.deviation)
            self.reproduced.setdefault(index, []).append(judgement.result)

    async def _one(self, case: Case) -> None:
        self._progress(case.id)
        try:
            exchange = await run_case(self.client, case, self.timeouts)
        except ClientError as exc:
            self._add(transport_failure(case, f"{type(exc).__name__}: {exc}"))
            return
        self.records.extend(exchange.records)
        self._add(
            judge(
                case,
                exchange,
                self.by_mode[case.api_mode],
                deviations=self.contract.deviations,
                release=self.release,
            )
        )

    async def _rejected(self, case: Case) -> None:
        if case.api_mode != "videos-async":
            await self._one(case)
            return
        self.async_rejections += 1
        before = await video_job_ids(self.client)
        await self._one(case)
        after = await video_job_ids(self.client)
        if before.ids is None or after.ids is None:
            self.unlisted.append(f"{case.id}: {before.unavailable or after.unavailable}")
            return
        if after.ids - before.ids:
            new = sorted(after.ids - before.ids)
            self.failures.append(
                f"creates_job_for_invalid_async: {case.id} ({case.sent}) was answered "
                f"{self.results[-1].observed_status} yet GET /v1/videos gained job(s) {new[:3]}"
            )

    def _job_case(self) -> None:
        """Whether the rejected async requests created jobs, as a recorded case."""
        if not self.async_rejections:
            return
        created = any(f.startswith("creates_job_for_invalid_async") for f in self.failures)
        result, invalid = job_case(self.async_rejections, self.unlisted, created)
        self.results.append(result)
        self.invalid.extend(invalid)

    async def _side_effects_after_rejections(self, dirs: list[Path], start: TempSnapshot) -> None:
        if not dirs:
            return
        left = TempSnapshot.take(dirs).new_since(start)
        if left:
            self.failures.append(
                f"leaves_temp_file: rejected requests left {len(left)} new "
                f"entr(y/ies) in the temp dirs: {left[:3]}"
            )

    async def _final_checks(self, dirs: list[Path], start: TempSnapshot) -> None:
        self._progress("health and known-good request")
        status = await health_status(self.client)
        if status != 200:
            self.failures.append(
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
        self._temp_case(dirs, start)

    def _temp_case(self, dirs: list[Path], start: TempSnapshot) -> None:
        result, failures, invalid = temp_case(dirs, start, TempSnapshot.take(dirs))
        self.results.append(result)
        self.failures.extend(failures)
        self.invalid.extend(invalid)

    def _limitations(self) -> tuple[str, ...]:
        """One reviewer-readable sentence per reproduced declaration: what the server does, and
        the cases that showed it (the evidence is in the cases artifact)."""
        out = []
        for index, results in sorted(self.reproduced.items()):
            deviation = self.contract.deviations[index]
            seen = [f"{r.id} ({r.sent}) -> HTTP {r.observed_status}" for r in results[:4]]
            more = f" and {len(results) - 4} more" if len(results) > 4 else ""
            out.append(f"{deviation.reason.rstrip('.')} (seen: {'; '.join(seen)}{more}).")
        return tuple(out)

    def _outcome(
        self, contract_file: Path, elapsed_s: float, too_slow: str | None = None
    ) -> CheckOutcome:
        deviations = [r for r in self.results if r.deviation]
        if too_slow is not None:
            self.invalid.append(too_slow)
        reasons = self.failures[:MAX_REASONS]
        if len(self.failures) > MAX_REASONS:
            reasons.append(f"... and {len(self.failures) - MAX_REASONS} more (see the cases)")
        reasons += self.invalid
        reasons += [
            f"declared deviation: {r.id}: observed {r.observed_status}, expected "
            f"{r.expected_status}"
            for r in deviations
        ]
        measurements = (
            Measurement(name="cases", value=len(self.results), unit="count"),
            Measurement(name="cases_failed", value=len(self.failures), unit="count"),
            Measurement(
                name="accepted_but_invalid",
                unit="count",
                value=sum("accepted-but-invalid" in f for f in self.failures),
            ),
            Measurement(name="declared_deviations", value=len(deviations), unit="count"),
            Measurement(
                name="stale_deviations",
                unit="count",
                value=sum(f.startswith("stale deviation") for f in self.failures),
            ),
            Measurement(name="not_checked", value=len(self.invalid), unit="count"),
            Measurement(name="gate_elapsed", value=round(elapsed_s, 3), unit="s"),
            *((self.calibration,) if self.calibration is not None else ()),
        )
        return CheckOutcome(
            outcome=verdict(self.failures, invalid=self.invalid),
            reasons=tuple(reasons),
            measurements=measurements,
            artifacts=self._artifacts(contract_file),
            cases=tuple(self.results),
            requested={
                "model": self.contract.model,
                "release": self.release,
                "endpoints": [e.api_mode for e in self.endpoints],
            },
            limitations=self._limitations(),
        )

    def _artifacts(self, contract_file: Path) -> tuple[Artifact, ...]:
        sink = self.ctx.artifacts
        cases = "".join(r.model_dump_json() + "\n" for r in self.results).encode()
        raw = json.dumps(
            [
                {
                    "case": r.case_id,
                    "method": r.method,
                    "path": r.path,
                    "status": r.status,
                    "content_type": r.content_type,
                    "size": r.size,
                    "elapsed_s": r.elapsed_s,
                }
                for r in self.records
            ],
            indent=1,
        )
        return (
            sink.put_artifact(
                cases,
                media_type="application/x-ndjson",
                role="cases",
                name=f"api-contract-cases-{self.contract.model}.jsonl",
            ),
            sink.put_artifact(
                raw.encode(),
                media_type="application/json",
                role="raw-responses",
                name=f"api-contract-responses-{self.contract.model}.json",
            ),
            sink.put_artifact(
                contract_file,
                media_type="application/yaml",
                role="contract",
                name=contract_file.name,
            ),
        )
