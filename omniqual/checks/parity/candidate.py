"""The ``candidate_parity`` check kind (gate ``parity``): a candidate deployment (the row and
its served recipe) against its reference deployment (by default the dense BF16 resident
baseline of the same model and API mode), over the shared request set.

Failed: the candidate errs where the reference answers, returns another size or count, or
lands outside the tolerance of its fast paths (the loosest bound any of its features sets); or
a fast path is shown inactive (outputs no further from the reference than the reference from
itself, cases sent together finishing an execution apart, a log count below its minimum).
Invalid: the reference cannot be served or answer, the two deployments differ in more than the
candidate's own flags (checkpoint, releases, other serve flags), a fast path's signals are all
absent, or fewer than three timed repetitions succeeded on a side. Passed with a limitation (the
row at most limited): a feature the release offers no way to show active. Otherwise passed."""

import dataclasses
from collections.abc import Callable, Sequence

from pydantic import JsonValue

from omniqual.checks.api_contract.exchange import Timeouts
from omniqual.checks.base import (
    CheckContext,
    CheckOutcome,
    CheckParams,
    KeptSink,
    ServedReference,
    verdict,
)
from omniqual.checks.parity.candidate_activity import judge_paths
from omniqual.checks.parity.candidate_attribution import attribution_problems
from omniqual.checks.parity.candidate_census import (
    Census,
    census_entry,
    store_census,
    take_census,
)
from omniqual.checks.parity.candidate_collect import SideRun, run_side
from omniqual.checks.parity.candidate_measured import reference_spread
from omniqual.checks.parity.candidate_media import OutputPair, VisualOptions, pair_outputs
from omniqual.checks.parity.candidate_params import (
    MIN_REPETITIONS,
    CandidateParityParams,
    FastPath,
)
from omniqual.checks.parity.candidate_proof import launch_text
from omniqual.checks.parity.candidate_summary import (
    latency_measurements,
    memory_measurements,
    memory_note,
    pair_entry,
    pair_measurements,
    side_block,
    signal_entries,
)
from omniqual.checks.parity.requests import ParityCase, parity_cases
from omniqual.client import ClientError, OmniClient
from omniqual.compare.tolerance_combine import combined
from omniqual.domain.axes import RowKey
from omniqual.domain.contract import EndpointContract
from omniqual.domain.evidence import CaseResult
from omniqual.domain.outcomes import GateOutcome
from omniqual.specs.contracts import contract_path, load_contract

MAX_REASONS = 40


def reference_row(row: RowKey, baseline: dict[str, str]) -> RowKey:
    """The row with the baseline's axis values: same model, task, API mode and transport."""
    return RowKey(tuple((axis, baseline.get(axis, value)) for axis, value in row.items))


def features_of(row: RowKey, baseline: dict[str, str]) -> list[str]:
    return [f"{a}={v}" for a, v in row.items if a in baseline and baseline[a] != v]


class CandidateParityCheck:
    kind = "candidate_parity"
    params_model = CandidateParityParams
    needs = "server"

    async def run(self, ctx: CheckContext, params: CheckParams) -> CheckOutcome:
        assert isinstance(params, CandidateParityParams)
        endpoint = _endpoint(ctx, params)
        if isinstance(endpoint, str):
            return CheckOutcome(GateOutcome.SKIPPED, (endpoint,))
        features = features_of(ctx.row, params.baseline)
        if not features:
            return CheckOutcome(GateOutcome.SKIPPED, ("the row is its own baseline",))
        undeclared = [f for f in features if params.fast_path(f) is None]
        if undeclared:
            why = f"the gate spec declares no fast path for {', '.join(undeclared)}"
            return CheckOutcome(GateOutcome.INVALID, (why,))
        paths = [p for f in features if (p := params.fast_path(f)) is not None]
        baseline = reference_row(ctx.row, params.baseline)
        if ctx.serve_reference is None:
            why = f"no reference deployment can be served here (baseline row {baseline})"
            return CheckOutcome(GateOutcome.INVALID, (why,))
        # A fast path may need more of the same work to engage (a step cache past its
        # warm-up): its request fields go to every case on both sides.
        overrides = {k: v for p in paths for k, v in p.request.items()}
        cases = [
            dataclasses.replace(case, values={**case.values, **overrides})
            for case in parity_cases(params.requests, endpoint)
        ]
        run = _Run(ctx, params, paths, cases)
        try:
            async with ctx.serve_reference(baseline) as served:
                ctx.progress(f"parity: reference {served.recipe_id}", 0.0)
                # Every case twice, the second time on a second launch of the baseline:
                # its own spread, launch to launch as well as request to request.
                reference = await run.side(
                    served.make_client,
                    served.target.pid,
                    1,
                    repeat=True,
                    again=served.make_again_client,
                )
        except Exception as exc:  # the reference failing is no finding on the candidate
            why = f"the reference deployment (row {baseline}) could not serve: {exc}"
            return CheckOutcome(GateOutcome.INVALID, (why,), requested=run.requested(baseline))
        ctx.progress("parity: candidate", 0.5)
        concurrent = max(p.concurrent for p in paths)
        candidate = await run.side(ctx.make_client, ctx.target.pid, concurrent)
        metrics_text = await _metrics_text(ctx)
        census = None
        if any(p.census is not None for p in paths):
            # After both sides are timed: the census builds a pipeline in a subprocess.
            ctx.progress("parity: module census of the candidate", 0.9)
            census = await take_census(ctx, params)
        return run.judge(served, baseline, reference, candidate, metrics_text, census)


def _endpoint(ctx: CheckContext, params: CandidateParityParams) -> EndpointContract | str:
    model, api_mode = ctx.row.get("model"), ctx.row.get("api_mode")
    if not model:
        return "the row has no model axis value"
    path = contract_path(ctx.project_root / params.contracts_dir, model)
    if not path.is_file():
        return f"no contract for model {model!r}: {path}"
    contract = load_contract(path)
    found = next((e for e in contract.endpoints if e.api_mode == api_mode), None)
    return found or f"contract {path.name} declares no endpoint for api_mode {api_mode!r}"


async def _metrics_text(ctx: CheckContext) -> str | None:
    try:
        async with ctx.make_client() as client:
            return await client.metrics_text()
    except ClientError:
        return None


class _Run:
    def __init__(
        self,
        ctx: CheckContext,
        params: CandidateParityParams,
        paths: Sequence[FastPath],
        cases: Sequence[ParityCase],
    ) -> None:
        self.ctx, self.params, self.paths, self.cases = ctx, params, paths, cases
        # Several features at once: each one's tolerance admits its own deviation, so the
        # combination is held to the loosest bound any of them sets.
        names = list(dict.fromkeys(p.tolerance for p in paths))
        self.tolerance_name = "+".join(names)
        self.tolerance = combined([(n, params.tolerances[n]) for n in names])
        self.sink = KeptSink(ctx.artifacts)

    async def side(
        self,
        make_client: Callable[[], OmniClient],
        pid: int | None,
        concurrent: int,
        *,
        repeat: bool = False,
        again: Callable[[], OmniClient] | None = None,
    ) -> SideRun:
        params = self.params
        timeouts = Timeouts(params.request_timeout_s, params.job_timeout_s,
                            params.poll_interval_s)  # fmt: skip
        return await run_side(
            make_client, pid, self.cases, timeouts=timeouts, concurrent=concurrent,
            warmup=params.latency.warmup, repetitions=params.latency.repetitions,
            observer_interval_s=params.observer_interval_s, repeat=repeat, again=again,
        )  # fmt: skip

    def requested(self, baseline: RowKey) -> dict[str, JsonValue]:
        requests = self.params.requests
        return {
            "reference_row": str(baseline),
            "features": [p.feature for p in self.paths],
            "cases": len(self.cases),
            "prompts": len(requests.prompts),
            "seeds": list(requests.seeds),
            "repetitions": self.params.latency.repetitions,
            "warmup": self.params.latency.warmup,
            "request_overrides": {k: v for p in self.paths for k, v in p.request.items()},
        }

    def judge(
        self,
        served: ServedReference,
        baseline: RowKey,
        reference: SideRun,
        candidate: SideRun,
        metrics_text: str | None,
        census: Census | None = None,
    ) -> CheckOutcome:
        failures: list[str] = []
        invalid: list[str] = []
        pairs: list[OutputPair] = []
        cases: list[CaseResult] = []
        for case in self.cases:
            found, outcome, observed = self._case(case, reference, candidate, failures, invalid)
            pairs += found
            cases.append(CaseResult(id=case.id, endpoint=case.api_mode, sent=f"seed {case.seed}",
                                    expected_status=f"within {self.tolerance_name}",
                                    observed_status=observed, outcome=outcome))  # fmt: skip
        kind = self.cases[0].kind if self.cases else "image"
        spread = reference_spread(kind, reference.outputs, reference.repeat)
        activity = judge_paths(
            self.paths, log=launch_text(self.ctx.target.log_path), metrics=metrics_text,
            pairs=pairs, spread=spread, candidate=candidate, census=census,
        )  # fmt: skip
        if census is not None:
            store_census(self.sink, census)
        failures += activity.failures
        invalid += activity.invalid
        owned = {flag for p in self.paths for flag in p.flags}
        unattributable = attribution_problems(self.ctx.provenance, served.provenance, owned)
        invalid += [f"not attributable to the fast path: {why}" for why in unattributable]
        for side, run in (("reference", reference), ("candidate", candidate)):
            got = len(run.latency.samples_s)
            if got < MIN_REPETITIONS:
                why = "; ".join(dict.fromkeys(run.latency.failures)) or "too few requested"
                invalid.append(f"too few latency repetitions on the {side}: {got} succeeded, "
                               f"{MIN_REPETITIONS} needed ({why})")  # fmt: skip
        notes = [n for s, r in (("reference", reference), ("candidate", candidate))
                 if (n := memory_note(s, r.memory))]  # fmt: skip
        effective: dict[str, JsonValue] = {
            "parity": {
                "reference_row": str(baseline),
                "reference_recipe": served.recipe_id,
                "reference_provenance": dict(served.provenance),
                "tolerance": self.tolerance_name,
                "tolerance_rationale": self.tolerance.rationale,
                "signals": signal_entries(activity.signals),
                "reference_spread": spread.describe(),
                "reference_spread_between": (
                    "two launches of the baseline"
                    if served.make_again_client is not None
                    else "two passes on the one deployment given (a URL is not launched again)"
                ),
                "attribution": list(unattributable),
                "census": {
                    p.feature: census_entry(p.census, census)
                    for p in self.paths
                    if p.census is not None and census is not None
                },
                "pairs": [pair_entry(p, kind) for p in pairs],
                "reference": side_block(reference),
                "candidate": side_block(candidate),
                "notes": list(notes),
            }
        }
        reasons = [*failures, *invalid]
        if len(reasons) > MAX_REASONS:
            reasons = [*reasons[:MAX_REASONS], f"… and {len(reasons) - MAX_REASONS} more"]
        return CheckOutcome(
            verdict(failures, invalid=invalid),
            tuple(reasons),
            measurements=(
                *pair_measurements(pairs),
                *latency_measurements(reference.latency, candidate.latency),
                *memory_measurements(reference.memory, candidate.memory),
            ),
            artifacts=tuple(self.sink.stored.values()),
            cases=tuple(cases),
            requested=self.requested(baseline),
            effective=effective,
            limitations=tuple(activity.limitations),
        )

    def _case(
        self,
        case: ParityCase,
        reference: SideRun,
        candidate: SideRun,
        failures: list[str],
        invalid: list[str],
    ) -> tuple[list[OutputPair], GateOutcome, str]:
        ref, cand = reference.outputs[case.id], candidate.outputs[case.id]
        if ref.problem is not None:
            invalid.append(f"{case.id}: the reference gave no output ({ref.problem})")
            return [], GateOutcome.INVALID, "reference gave no output"
        if cand.problem is not None:
            failures.append(f"{case.id}: the candidate gave no output ({cand.problem})")
            return [], GateOutcome.FAILED, cand.problem
        if len(cand.media) != len(ref.media):
            failures.append(f"{case.id}: candidate returned {len(cand.media)} outputs, "
                            f"reference {len(ref.media)}")  # fmt: skip
            return [], GateOutcome.FAILED, f"{len(cand.media)} outputs"
        options = VisualOptions(self.params.thumbnail_side, self.params.difference_gain)
        sink, tolerance = self.sink, self.tolerance
        pairs = [
            pair_outputs(case.kind, case.id, i, r, c, tolerance, sink, options)
            for i, (r, c) in enumerate(zip(ref.media, cand.media, strict=True))
        ]
        found = [reason for p in pairs for reason in p.failures]
        failures += found
        outcome = GateOutcome.FAILED if found else GateOutcome.PASSED
        same = sum(p.identical for p in pairs)
        observed = f"{same} of {len(pairs)} identical" if not found else found[0][:120]
        return pairs, outcome, observed
