"""The ``isolation`` check kind: concurrent requests never see each other's settings, outputs
or ids.

A heterogeneous request set (``plan``: variants of the row's contract probe in every value the
contract lets change the computation) is first served alone (``solo``): after a warm-up, each
request twice, one after another; the first answer is its truth, the second shows it reproduces
(exactly, so the exact rule may apply, or within the tolerance). A request whose truth is the
same as another's under the rule in force could not show a crossing and stays out of the
rounds. Then the rest are sent together in every (pattern, order, repeat) round (``rounds``)
while ``/metrics`` is sampled, and each answer is judged against its own truth (``judge``). A
round proves something only when two requests at least were served successfully and at once
(``proof``).

Outcome: failed on any crossed output, reordered outputs, foreign id or job, a wrong size or
count, an error answer that is not a clear 4xx rejection, or a server that refused concurrent
requests and never served two at once; invalid when the requests never met (and none was
refused), a request fails alone or does not reproduce alone within the tolerance (exactly,
where required), fewer than two requests are distinguishable alone, or the workload cannot fit
``budget_s``; passed otherwise.
"""

import statistics
import time
from typing import ClassVar, Literal

from omniqual.checks.base import CheckContext, CheckOutcome
from omniqual.checks.isolation.exchange import Timeouts
from omniqual.checks.isolation.judge import Rule, Verdict, judge_case, judge_ids
from omniqual.checks.isolation.matching import batching
from omniqual.checks.isolation.params import IsolationParams
from omniqual.checks.isolation.plan import TWIN_MODE, IsoRequest, build_request_set
from omniqual.checks.isolation.proof import (
    GaugeSampler,
    Meeting,
    judge_meeting,
    unmet_findings,
)
from omniqual.checks.isolation.record import Recorder
from omniqual.checks.isolation.rounds import plan_rounds, send_round
from omniqual.checks.isolation.solo import SoloPhase, indistinguishable, serve_alone
from omniqual.checks.workload_budget import projected_past_budget
from omniqual.client import OmniClient
from omniqual.domain.contract import ModelContract
from omniqual.domain.outcomes import GateOutcome
from omniqual.specs.contracts import contract_path, load_contract


class IsolationCheck:
    kind: ClassVar[str] = "isolation"
    params_model: ClassVar[type[IsolationParams]] = IsolationParams
    needs: ClassVar[Literal["server", "checkpoint", "launches"]] = "server"
    measures: ClassVar[bool] = False  # judges outputs; timings only prove the requests met

    async def run(self, ctx: CheckContext, params: IsolationParams) -> CheckOutcome:
        model, api_mode = ctx.row.get("model"), ctx.row.get("api_mode")
        if not model or not api_mode:
            return CheckOutcome(GateOutcome.INVALID, ("the row names no model or api_mode",))
        path = contract_path(ctx.project_root / params.contracts_dir, model)
        if not path.is_file():
            return CheckOutcome(GateOutcome.INVALID, (f"no contract for model {model!r}: {path}",))
        contract = load_contract(path)
        endpoint = contract.endpoint(api_mode)
        if endpoint is None:
            why = f"contract {path.name} declares no endpoint for api_mode {api_mode!r}"
            return CheckOutcome(GateOutcome.SKIPPED, (why,))
        requests = build_request_set(contract, api_mode, params.requests, params.prompts)
        async with ctx.make_client() as client, ctx.make_client() as side:
            return await _run(ctx, params, contract, requests, client, side)


async def _run(
    ctx: CheckContext, params: IsolationParams, contract: ModelContract,
    requests: list[IsoRequest], client: OmniClient, side: OmniClient,
) -> CheckOutcome:  # fmt: skip
    started = time.monotonic()
    api_mode = requests[0].api_mode
    endpoint = contract.endpoint(api_mode)
    assert endpoint is not None
    timeouts = Timeouts(params.request_timeout_s, params.job_timeout_s, params.poll_interval_s)
    prompts = (*params.prompts, *(str(v) for k, v in endpoint.probe.items()
                                  if k in ("prompt", "input")))  # fmt: skip
    record = Recorder(ctx, params, requests, prompts)
    ctx.progress("isolation: solo truth", 0.0)
    kind = endpoint.output.kind
    solo = await serve_alone(client, requests, timeouts, kind, params.tolerance)
    record.measure("warmup_s", round(solo.warmup_s, 4), "s")
    no_truth = _no_truth(params, solo, record)
    if no_truth:
        return record.outcome(invalid=no_truth)
    service_s = statistics.median(solo.service_s.values())
    record.measure("solo_service_s", round(service_s, 4), "s", samples=len(solo.service_s))
    record.measure("solo_reproducible", float(solo.exact), "bool")
    execution = ctx.row.get("execution")
    batch_row = batching(execution)
    rule = Rule(kind, solo.exact and not batch_row, params.tolerance, params.crossing_margin_db,
                params.crossing_min_db)  # fmt: skip
    left_out = indistinguishable(requests, solo.truths, rule)
    together = {r.label: r for r in requests if r.label not in left_out}
    # Answers are attributed among the requests sent only: one left out has another's truth.
    truths = {label: solo.truths[label] for label in together}
    record.left_out(left_out, len(together))
    if len(together) < 2:
        return record.outcome(invalid=[record.scrub(
            "fewer than two requests are distinguishable alone under the "
            f"{'exact' if rule.exact else 'tolerance'} rule, so no crossing could be seen: "
            + "; ".join(f"request {k}: {v}" for k, v in left_out.items()))])  # fmt: skip
    twin = TWIN_MODE.get(api_mode)
    twin = twin if twin and contract.endpoint(twin) is not None else None
    patterns = [p for p in params.patterns if p != "mixed" or twin]
    rounds = plan_rounds(list(together), patterns, params.orders, params.repeats)
    units = len(rounds) * len(together)
    too_slow = projected_past_budget(service_s, units, _budget_left(ctx, started),
                                    "one solo request")  # fmt: skip
    if too_slow is not None:
        return record.outcome(invalid=[too_slow])
    record.effective.update({
        "rule": "exact" if rule.exact else "tolerance", "batching_row": batch_row,
        "execution": execution, "patterns": list(patterns), "twin_endpoint": twin,
        "skipped_patterns": [p for p in params.patterns if p not in patterns],
    })  # fmt: skip
    sampler = GaugeSampler(side, params.metrics_poll_s)
    meetings: list[tuple[str, Meeting]] = []
    for number, plan in enumerate(rounds):
        ctx.progress(f"isolation: {plan.where}", 0.1 + 0.9 * number / len(rounds))
        async with sampler.watching():
            answers = await send_round(client, plan, together, timeouts,
                                      params.stagger_fraction * service_s, twin)  # fmt: skip
        meeting = judge_meeting(answers, solo.service_s, sampler.peak, batch_row=batch_row,
                                span_fraction=params.parallel_span_fraction)  # fmt: skip
        meetings.append((plan.pattern, meeting))
        foreign = judge_ids(answers, together)
        for one in answers:
            found: Verdict = judge_case(together[one.label], one, truths, together, rule)
            if one.label in foreign and found.outcome is GateOutcome.PASSED:
                found = Verdict(one.label, GateOutcome.FAILED, "id", foreign[one.label])
            record.case(plan, one, found, meeting)
    failed, invalid = unmet_findings(meetings, patterns)
    return record.outcome(invalid=invalid, failed=[record.scrub(f) for f in failed],
                          meetings=meetings)  # fmt: skip


def _no_truth(params: IsolationParams, solo: SoloPhase, record: Recorder) -> list[str]:
    """Why the solo phase left a request without a truth to judge it by (empty: none)."""
    if solo.failed is not None:
        request, served = solo.failed
        what = served.problem or f"HTTP {served.status} {served.error}".strip()
        named = f"request {request.label} ({record.settings(request)})"
        return [record.scrub(f"{named} failed alone, so it has no truth: {what}")]
    if params.require_exact:
        return [f"request {label} served twice alone did not answer the same output, and this "
                "row must reproduce it exactly" for label in solo.inexact]  # fmt: skip
    return [record.scrub(f"request {label} served twice alone {how}: no solo truth to judge "
                         "against") for label, how in solo.beyond.items()]  # fmt: skip


def _budget_left(ctx: CheckContext, started: float) -> float | None:
    """What is left of the gate's budget after the solo phase (None: no budget)."""
    budget = ctx.gate.budget_s
    return None if budget is None else max(budget - (time.monotonic() - started), 0.0)
