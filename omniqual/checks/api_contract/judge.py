"""Judge one case: what the contract expected against what the server answered.

Accepted values must give 2xx with output of the requested shape and count. Invalid values must
give 400 with an error envelope naming the field (its ``param``, else the field as a whole word
of the message); payload limits 413. A 2xx for a value the contract rejects is
*accepted-but-invalid*. A miss that a declared deviation of this release covers (same case, same
observed status, and the error message and problem it declares, if any) is recorded as a
deviation: never a pass, never a gate failure, always a limitation of the row. A covered case
that meets the contract again is a stale declaration and fails the gate (strict xfail).
"""

import re
from dataclasses import dataclass
from fnmatch import fnmatchcase

from omniqual.checks.api_contract.cases import Case, render_value
from omniqual.checks.api_contract.exchange import Exchange
from omniqual.checks.api_contract.outputs import (
    check_audio,
    check_images,
    check_video,
    expected_output,
)
from omniqual.domain.contract import Deviation, EndpointContract
from omniqual.domain.evidence import CaseResult
from omniqual.domain.outcomes import GateOutcome


@dataclass(frozen=True, slots=True)
class Judgement:
    result: CaseResult
    failure: str | None = None
    """The gate-failing reason, naming endpoint, field, value, expected and observed."""
    deviation: Deviation | None = None
    """The declared deviation this case reproduced (the row's limitation)."""


def covering(
    deviations: tuple[Deviation, ...], release: str | None, case_id: str
) -> tuple[Deviation, ...]:
    """The declarations of this release that name this case (whatever status they declare)."""
    if release is None:
        return ()
    return tuple(
        d
        for d in deviations
        if fnmatchcase(release, d.release) and any(fnmatchcase(case_id, p) for p in d.cases)
    )


def declared_deviation(
    deviations: tuple[Deviation, ...],
    release: str | None,
    case_id: str,
    status: int,
    *,
    error: str = "",
    problem: str = "",
) -> Deviation | None:
    """The declaration of this release naming this case that describes what was observed:
    its status, and the error and problem where it declares them."""
    found = covering(deviations, release, case_id)
    return next((d for d in found if d.observes(status, error, problem)), None)


def observed_error(exchange: Exchange) -> str:
    """The error message of the answer, else the text of its body (what ``observed_error``
    of a deviation is searched in)."""
    raw = exchange.response
    if raw.error is not None:
        return raw.error.message
    return raw.body[:4096].decode("utf-8", errors="replace")


def transport_failure(case: Case, error: str) -> Judgement:
    reason = f"{case.id}: {case.sent}: no HTTP answer ({error})"
    return Judgement(_result(case, "no answer", GateOutcome.FAILED, note=error[:200]), reason)


def judge(
    case: Case,
    exchange: Exchange,
    endpoint: EndpointContract,
    *,
    deviations: tuple[Deviation, ...] = (),
    release: str | None = None,
) -> Judgement:
    raw = exchange.response
    observed = str(raw.status)
    problem = _problem(case, exchange, endpoint)
    declared = covering(deviations, release, case.id)
    where = f"{endpoint.path} {case.field or 'request'}"
    if problem is None and declared:
        statuses = "/".join(str(d.observed_status) for d in declared)
        reason = (
            f"stale deviation: upstream fixed it? {case.id} ({where}): {case.sent} now meets "
            f"the contract (HTTP {raw.status}) where {release} was declared to answer "
            f"{statuses}; remove the declaration"
        )
        return Judgement(_result(case, observed, GateOutcome.FAILED, note=reason[:240]), reason)
    if problem is None:
        return Judgement(_result(case, observed, GateOutcome.PASSED))
    deviation = declared_deviation(deviations, release, case.id, raw.status,
                                   error=observed_error(exchange), problem=problem)  # fmt: skip
    if deviation is not None:
        note = f"declared deviation of {release}: {deviation.reason}"
        result = _result(case, observed, GateOutcome.FAILED, note=note[:240], deviation=True)
        return Judgement(result, None, deviation)
    reason = f"{case.id} ({where}): {case.sent}: {problem}"
    return Judgement(_result(case, observed, GateOutcome.FAILED, note=problem[:240]), reason)


def _problem(case: Case, exchange: Exchange, endpoint: EndpointContract) -> str | None:
    raw = exchange.response
    if case.expect == "accepted":
        if not raw.ok:
            detail = scrub(raw.error.message, case)[:160] if raw.error else "no error envelope"
            return f"legal value rejected: expected 2xx, observed HTTP {raw.status} ({detail})"
        problems = _output_problems(case, exchange, endpoint)
        return "wrong output: " + "; ".join(problems) if problems else None
    want = case.expected_status
    what = _WHAT[case.expect]
    if raw.ok:
        value = case.sent or render_value(case.field or "", case.values.get(case.field or ""))
        return (
            f"accepted-but-invalid: {what} {value} answered HTTP {raw.status}, contract says {want}"
        )
    if str(raw.status) not in want.split("/"):
        return f"{what}: expected HTTP {want}, observed HTTP {raw.status}"
    return _envelope_problem(case, exchange)


_WHAT = {
    "invalid": "invalid value",
    "payload": "payload over the cap",
    "limit": "media over a decoded limit",
    "accepted": "legal value",
}


def scrub(text: str, case: Case) -> str:
    """Server messages may echo the request body: hide the prompt-like values in them."""
    for name in ("prompt", "input", "negative_prompt"):
        value = case.values.get(name)
        if isinstance(value, str) and len(value) >= 3:
            text = text.replace(value, "<redacted>")
    return text


def _envelope_problem(case: Case, exchange: Exchange) -> str | None:
    raw = exchange.response
    if raw.error is None:
        return (
            f"error_without_envelope: HTTP {raw.status} body is not an error envelope "
            f"(content-type {raw.content_type or 'none'!r})"
        )
    if case.field is None or case.expect in ("payload", "limit"):
        # A whole-body cap may fire before any field is parsed, and a decoder's limit before
        # the part is tied to its field.
        return None
    names = (case.field, *_CARRIERS.get((case.api_mode, case.field), ()))
    if any(names_field(raw.error.param, raw.error.message, name) for name in names):
        return None
    if raw.error.param:
        return f"error envelope names param {raw.error.param!r}, not the field {case.field!r}"
    return f"error envelope does not name the field {case.field!r}"


# Fields the wire carries inside another one: chat sends the prompt as the user message.
_CARRIERS: dict[tuple[str, str], tuple[str, ...]] = {
    ("chat-completions", "prompt"): ("messages",),
}


def names_field(param: str | None, message: str, field: str) -> bool:
    """``error.param`` when the server fills it (its last path segment, ``body.n`` -> ``n``),
    else the field as a whole word of the message: for ``n``, "invalid" does not count."""
    if param:
        segments = [s for s in re.split(r"[.\[\]/]", param.lower()) if s]
        return bool(segments) and field.lower() in segments
    spellings = {field.lower(), field.lower().replace("_", " ")}
    text = message.lower()
    return any(re.search(rf"(?<![a-z0-9_]){re.escape(s)}(?![a-z0-9_])", text) for s in spellings)


def _output_problems(case: Case, exchange: Exchange, endpoint: EndpointContract) -> list[str]:
    if exchange.problem is not None:
        return [exchange.problem]
    expected = expected_output(endpoint, case.values)
    out = endpoint.output
    if out.kind == "image":
        return check_images(exchange.media, expected)
    if not exchange.media:
        return ["no media in the answer"]
    if out.kind == "video":
        return check_video(exchange.media[0], expected)
    return check_audio(
        exchange.media[0],
        exchange.media_type,
        expected,
        out.sample_rate,
        out.channels,
        out.length_tolerance_s,
    )


def _result(
    case: Case, observed: str, outcome: GateOutcome, *, note: str = "", deviation: bool = False
) -> CaseResult:
    return CaseResult(
        id=case.id,
        endpoint=case.api_mode,
        field=case.field,
        sent=case.sent,
        expected_status=case.expected_status,
        observed_status=observed,
        outcome=outcome,
        deviation=deviation,
        note=note,
    )
