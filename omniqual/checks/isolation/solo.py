"""The solo phase: each request's truth, taken warm and checked, and which requests can tell a
crossing apart.

A warm-up request (the first of the set, answer discarded) comes first: a cold first request
(loading, compiling, allocating) would inflate the solo service times the timing proof sums, and
let a server computing one request at a time look parallel. Then every request is served alone
twice, one after another: the first answer is its truth, the second tells whether that request
reproduces its own output, exactly (the exact rule may apply) or within the tolerance (else
there is no truth to judge it by). Each request's solo service time is the shorter of its two,
so a slow outlier never inflates the sum a round's timing is held against.

Then, under the rule in force, a request whose solo output is the same as an earlier request's
cannot show a crossing between them: answered with the other's output together, it would
match its own truth. It is left out of the together rounds (recorded), since the others still
prove isolation; with fewer than two requests left the run proves nothing and is invalid."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from omniqual.checks.isolation.exchange import Served, Timeouts, send
from omniqual.checks.isolation.judge import Rule
from omniqual.checks.isolation.matching import Kind, db, match
from omniqual.checks.isolation.plan import IsoRequest, differing
from omniqual.client import OmniClient
from omniqual.compare import ParityTolerance


@dataclass(frozen=True, slots=True)
class SoloPhase:
    truths: dict[str, Served]
    service_s: dict[str, float]
    """Per request, the shorter of its two warm solo service times."""
    warmup_s: float
    exact: bool
    """Every request answered the same output twice alone, bit for bit (or pixel for pixel)."""
    failed: tuple[IsoRequest, Served] | None = None
    """The first request that failed alone (no truth)."""
    inexact: tuple[str, ...] = ()
    """Requests served twice alone that did not answer the same output exactly."""
    beyond: dict[str, str] = field(default_factory=dict)
    """Per request served twice alone beyond the tolerance (or failing), how: no truth."""


async def serve_alone(client: OmniClient, requests: Sequence[IsoRequest], timeouts: Timeouts,
                      kind: Kind, tolerance: ParityTolerance) -> SoloPhase:  # fmt: skip
    warm = await send(client, requests[0], timeouts)
    truths: dict[str, Served] = {}
    for request in requests:
        truths[request.label] = served = await send(client, request, timeouts)
        if not served.ok:
            return SoloPhase(truths, {}, warm.elapsed_s, False, (request, served))
    service_s: dict[str, float] = {}
    inexact: list[str] = []
    beyond: dict[str, str] = {}
    for request in requests:
        first = truths[request.label]
        again = await send(client, request, timeouts)
        service_s[request.label] = min(first.elapsed_s, again.elapsed_s) if again.ok else (
            first.elapsed_s)  # fmt: skip
        pairs = list(zip(first.outputs, again.outputs, strict=False))
        counted = again.ok and len(again.outputs) == len(first.outputs)
        if counted and all(match(kind, a, b, exact=True, tolerance=tolerance).same
                           for a, b in pairs):  # fmt: skip
            continue
        inexact.append(request.label)
        spread = [match(kind, a, b, exact=False, tolerance=tolerance) for a, b in pairs]
        if not again.ok:
            what = again.problem or f"HTTP {again.status} {again.error}".strip()
            beyond[request.label] = f"failed the second time ({what})"
        elif not counted:
            beyond[request.label] = (f"answered {len(first.outputs)} output(s), then "
                                     f"{len(again.outputs)}")  # fmt: skip
        elif not all(m.same for m in spread):
            worst = min((m.score for m in spread if m.score is not None), default=None)
            beyond[request.label] = f"differs beyond the tolerance ({db(worst)})"
    return SoloPhase(truths, service_s, warm.elapsed_s, not inexact, None, tuple(inexact),
                     beyond)  # fmt: skip


def indistinguishable(requests: Sequence[IsoRequest], truths: Mapping[str, Served],
                      rule: Rule) -> dict[str, str]:  # fmt: skip
    """Per request left out, why: an output of its truth is the same, under ``rule``, as an
    output of an earlier kept request's truth (any index: the judge compares index by index,
    and a reorder or crossing may put any output anywhere).

    Left out rather than the whole gate invalid: a contract that does not list a knob, or a
    server that ignores one, makes one pair blind, not the others; they still prove isolation,
    and the lost pair is recorded with the settings it differed in. The earlier request is kept
    (the listed order puts the probe-like request first)."""
    kept: list[IsoRequest] = []
    left_out: dict[str, str] = {}
    for request in requests:
        mine = truths[request.label].outputs
        twin = next((other for other in kept if any(
            match(rule.kind, theirs, ours, exact=rule.exact, tolerance=rule.tolerance).same
            for theirs in truths[other.label].outputs for ours in mine)), None)  # fmt: skip
        if twin is None:
            kept.append(request)
            continue
        knobs = ", ".join(differing(request, twin)) or "nothing"
        under = "exactly" if rule.exact else "within the tolerance"
        left_out[request.label] = (f"its solo output is request {twin.label}'s {under} (they "
                                   f"differ in {knobs}): a crossing between them could not be "
                                   "seen, so it was not sent together")  # fmt: skip
    return left_out
