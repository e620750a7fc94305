"""The ``isolation`` check kind: concurrent requests never see each other's settings, outputs
or ids.

A heterogeneous request set (``plan``: variants of the row's contract probe in every value the
contract lets change the computation) is first served alone, one after another: each request's
solo output is its truth, and the first request served twice alone tells whether the row
reproduces an output exactly. Then the set is sent together in every (pattern, order, repeat)
round (``rounds``) while ``/metrics`` is sampled, and each answer is judged against its own
truth (``judge``). A round whose requests were not shown to meet in the server (``proof``)
proves nothing: when no round of a pattern met, the gate is invalid, never passed.

Outcome: failed on any crossed output, reordered outputs, foreign id or job, a wrong size or
count, or an error answer that is not a clear 4xx rejection; invalid when the requests never
met, a request fails alone, a solo output is not reproducible where exactness is required, or
the workload cannot fit ``budget_s``; passed otherwise.
"""

import statistics
import time
from collections.abc import Sequence
from typing import ClassVar, Literal

from omniqual.checks.base import CheckContext, CheckOutcome
from omniqual.checks.isolation.exchange import Served, Timeouts, send
from omniqual.checks.isolation.judge import Rule, Verdict, judge_case, judge_ids
from omniqual.checks.isolation.matching import db, match
from omniqual.checks.isolation.params import IsolationParams
from omniqual.checks.isolation.plan import TWIN_MODE, IsoRequest, build_request_set
from omniqual.checks.isolation.proof import GaugeSampler, Meeting, batching, judge_meeting
from omniqual.checks.isolation.record import Recorder
from omniqual.checks.isolation.rounds import plan_rounds, send_round
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
    by_label = {r.label: r for r in requests}
    ctx.progress("isolation: solo truth", 0.0)
    solos: dict[str, Served] = {}
    for request in requests:
        solos[request.label] = served = await send(client, request, timeouts)
        if not served.ok:
            what = served.problem or f"HTTP {served.status} {served.error}".strip()
            named = f"request {request.label} ({record.settings(request)})"
            return record.outcome(invalid=[record.scrub(f"{named} failed alone, so it has no "
                                                        f"truth: {what}")])  # fmt: skip
    again = await send(client, requests[0], timeouts)
    solo_s = {label: s.elapsed_s for label, s in solos.items()}
    service_s = statistics.median(solo_s.values())
    record.measure("solo_service_s", round(service_s, 4), "s", samples=len(solo_s))
    kind = endpoint.output.kind
    first = solos[requests[0].label]
    exact_solo = again.ok and len(again.outputs) == len(first.outputs) and all(
        match(kind, a, b, exact=True, tolerance=params.tolerance).same
        for a, b in zip(first.outputs, again.outputs, strict=False))  # fmt: skip
    record.measure("solo_reproducible", float(exact_solo), "bool")
    invalid: list[str] = []
    if not exact_solo:
        spread = [match(kind, a, b, exact=False, tolerance=params.tolerance)
                  for a, b in zip(first.outputs, again.outputs, strict=False)]  # fmt: skip
        if params.require_exact:
            invalid.append(f"request {requests[0].label} served twice alone did not answer the "
                           "same output, and this row must reproduce it exactly")  # fmt: skip
        elif not again.ok or not all(m.same for m in spread):
            worst = min((m.score for m in spread if m.score is not None), default=None)
            invalid.append(f"request {requests[0].label} served twice alone differs beyond the "
                           f"tolerance ({db(worst)}): no solo truth to judge against")  # fmt: skip
    if invalid:
        return record.outcome(invalid=invalid)
    execution = ctx.row.get("execution")
    batch_row = batching(execution)
    rule = Rule(kind, exact_solo and not batch_row, params.tolerance, params.crossing_margin_db,
                params.crossing_min_db)
    twin = TWIN_MODE.get(api_mode)
    twin = twin if twin and contract.endpoint(twin) is not None else None
    patterns = [p for p in params.patterns if p != "mixed" or twin]
    rounds = plan_rounds([r.label for r in requests], patterns, params.orders, params.repeats)
    units = len(rounds) * len(requests)
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
            answers = await send_round(client, plan, by_label, timeouts,
                                      params.stagger_fraction * service_s, twin)  # fmt: skip
        meeting = judge_meeting(answers, solo_s, sampler.peak, batch_row=batch_row,
                                span_fraction=params.parallel_span_fraction)  # fmt: skip
        meetings.append((plan.pattern, meeting))
        foreign = judge_ids(answers, by_label)
        for one in answers:
            found: Verdict = judge_case(by_label[one.label], one, solos, by_label, rule)
            if one.label in foreign and found.outcome is GateOutcome.PASSED:
                found = Verdict(one.label, GateOutcome.FAILED, "id", foreign[one.label])
            record.case(plan, one, found, meeting)
    return record.outcome(invalid=_never_met(meetings, patterns), meetings=meetings)


def _budget_left(ctx: CheckContext, started: float) -> float | None:
    """What is left of the gate's budget after the solo phase (None: no budget)."""
    budget = ctx.gate.budget_s
    return None if budget is None else max(budget - (time.monotonic() - started), 0.0)


def _never_met(meetings: list[tuple[str, Meeting]], patterns: Sequence[str]) -> list[str]:
    if not any(m.met for _, m in meetings):
        last = meetings[-1][1].how if meetings else "no round was sent"
        return [f"requests never met in the server: no round showed two requests in it at once "
                f"(last round: {last})"]  # fmt: skip
    return [f"the {p} rounds never met in the server: {[m for q, m in meetings if q == p][-1].how}"
            for p in patterns if not any(m.met for q, m in meetings if q == p)]  # fmt: skip

