"""Each together answer judged against its own solo truth: rejected with a clear 4xx (allowed),
failed otherwise; the output count and order as asked (each index against the same index alone);
each output the same as alone (exactly, or within the tolerance). A mismatch is attributed: an
output that is (closer to) another request's solo output is a crossing naming both requests and
the settings in which they differ; one that is its own output at another index is a reorder; a
wrong size names the requested and received sizes; otherwise it differs from solo by a score.
Ids are judged per round: no two requests share a job or response id, and an async job reports
its own size."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from omniqual.checks.isolation.exchange import Served
from omniqual.checks.isolation.matching import Kind, Match, db, match
from omniqual.checks.isolation.plan import IsoRequest, differing, render
from omniqual.compare import ParityTolerance
from omniqual.domain.outcomes import GateOutcome


@dataclass(frozen=True, slots=True)
class Rule:
    kind: Kind
    exact: bool
    tolerance: ParityTolerance
    margin_db: float
    min_db: float


@dataclass(frozen=True, slots=True)
class Verdict:
    label: str
    outcome: GateOutcome
    finding: str
    """same | rejected | crossed | reordered | size | count | differs | error | id"""
    reason: str = ""
    crossed_with: str | None = None
    fields: tuple[str, ...] = ()
    score_db: float | None = None
    pictures: tuple[bytes, bytes] | None = None
    """(alone, together) of the first wrong image, for thumbnails."""


def _named(request: IsoRequest, knobs: list[str]) -> str:
    shown = render(request, knobs)
    return f"request {request.label}" + (f" ({shown})" if shown else "")


def judge_case(request: IsoRequest, served: Served, solos: Mapping[str, Served],
               requests: Mapping[str, IsoRequest], rule: Rule) -> Verdict:  # fmt: skip
    solo = solos[request.label]
    label = request.label
    if not served.ok:
        status = served.status
        if status is not None and 400 <= status < 500 and served.problem is None:
            if served.error.strip():
                return Verdict(label, GateOutcome.PASSED, "rejected",
                               f"rejected with HTTP {status}: {served.error}")  # fmt: skip
            return Verdict(label, GateOutcome.FAILED, "error", f"request {label}: rejected with "
                           f"HTTP {status} and no error message when sent with others")  # fmt: skip
        what = served.problem or f"HTTP {status}"
        return Verdict(label, GateOutcome.FAILED, "error", f"request {label}: {what} when sent "
                       f"with others (alone: HTTP {solo.status})")  # fmt: skip
    truth = solo.outputs
    for index, output in enumerate(served.outputs[: len(truth)]):
        own = match(rule.kind, truth[index], output, exact=rule.exact, tolerance=rule.tolerance)
        if own.same:
            continue
        return _attribute(request, index, output, own, solos, requests, rule)
    if len(served.outputs) != len(truth):
        want = request.setting("n") or str(len(truth))
        got = len(served.outputs)
        return Verdict(label, GateOutcome.FAILED, "count", f"request {label} asked for {want} "
                       f"output(s) and got {got} (alone: {len(truth)})")  # fmt: skip
    return Verdict(label, GateOutcome.PASSED, "same")


def _attribute(request: IsoRequest, index: int, output: bytes, own: Match,
               solos: Mapping[str, Served], requests: Mapping[str, IsoRequest],
               rule: Rule) -> Verdict:  # fmt: skip
    label, truth = request.label, solos[request.label].outputs
    pictures = (truth[index], output) if rule.kind == "image" else None
    at = f" output {index}" if len(truth) > 1 else ""
    for other_index, other in enumerate(truth):
        if other_index != index and _close(rule, other, output).same:
            return Verdict(label, GateOutcome.FAILED, "reordered",
                           f"request {label}: output {index} is its alone output {other_index}: "
                           f"the {len(truth)} outputs came back reordered",
                           pictures=pictures)  # fmt: skip
    best: tuple[str, Match] | None = None
    for name, solo in solos.items():
        if name == label:
            continue
        for candidate in solo.outputs:
            found = _close(rule, candidate, output)
            if _better(found, own, best[1] if best else None, rule):
                best = (name, found)
    if best is not None:
        rival = requests[best[0]]
        knobs = differing(request, rival)
        crossed = ", ".join(knobs) or "nothing (identical settings)"
        return Verdict(label, GateOutcome.FAILED, "crossed",
                       f"{_named(request, knobs)} got request {rival.label}'s output"
                       f"{f' ({render(rival, knobs)})' if knobs else ''}{at}: settings "
                       f"crossed in {crossed} (against its own: {db(own.score)}, against "
                       f"{rival.label}'s: {db(best[1].score)})",
                       crossed_with=rival.label, fields=tuple(knobs), score_db=own.score,
                       pictures=pictures)  # fmt: skip
    if own.shape is not None:
        return Verdict(label, GateOutcome.FAILED, "size",
                       f"{_named(request, ['size', 'frames', 'length_s'])}{at}: {own.problems[0]}",
                       pictures=None)  # fmt: skip
    detail = "; ".join(own.problems[:2])
    return Verdict(label, GateOutcome.FAILED, "differs",
                   f"request {label}{at}: output differs from solo ({db(own.score)}): {detail}",
                   score_db=own.score, pictures=pictures)  # fmt: skip


def _close(rule: Rule, truth: bytes, output: bytes) -> Match:
    return match(rule.kind, truth, output, exact=rule.exact, tolerance=rule.tolerance)


def _better(found: Match, own: Match, best: Match | None, rule: Rule) -> bool:
    """Whether ``found`` (against another request's truth) attributes the output to that
    request: the same under the rule, or both measured and closer than to its own truth by
    ``margin_db`` and at least ``min_db`` close (unrelated outputs sit far below it); and
    better than the best attribution so far."""
    if not found.same:
        if found.score is None or own.score is None or found.score < rule.min_db:
            return False
        if found.score < own.score + rule.margin_db:
            return False
    if best is None:
        return True
    if found.same != best.same:
        return found.same
    return (found.score or 0.0) > (best.score or 0.0)


def judge_ids(served: Sequence[Served], requests: Mapping[str, IsoRequest]) -> dict[str, str]:
    """Per request label, why its answer is not its own by id: a job or response id another
    request of the round was given too, or an async job reporting another size."""
    found: dict[str, str] = {}
    for attr, what in (("job_id", "job id"), ("response_id", "response id")):
        owners: dict[str, list[str]] = {}
        for s in served:
            value = getattr(s, attr)
            if value:
                owners.setdefault(value, []).append(s.label)
        for labels in owners.values():
            for label in labels if len(labels) > 1 else []:
                others = ", ".join(x for x in labels if x != label)
                found.setdefault(label, f"request {label} was given the same {what} as "
                                        f"request {others}")  # fmt: skip
    for s in served:
        size = requests[s.label].expected.size
        if s.job_size and size is not None and s.job_size != f"{size[0]}x{size[1]}":
            found.setdefault(s.label, f"request {s.label}'s job reports size {s.job_size}, "
                                      f"but it asked for {size[0]}x{size[1]}: not its own "
                                      "job")  # fmt: skip
    return found
