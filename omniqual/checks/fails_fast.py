"""What makes a row ``unsupported`` (MX-07, MX-12): the restriction is refused early, with an
actionable message.

Two kinds share the rule. ``fails_fast`` (needs launches) starts the row's recipe, which must be
declared ``expect: rejects``, ``attempts`` times, and passes only if every attempt exited non-zero
within ``deadline_s`` without becoming ready, its log names the restriction (the recipe's
``expected_error``) on a line that matches the gate's ``actionable_patterns``, and all attempts
were refused the same way (exit code and matched text): a stable restriction. A crash that names
no restriction (an OOM, an import error, a kernel signature error) FAILS with the crash line;
exit code 0 is never a refusal. ``fails_fast_request`` (needs a served target) sends one request the
deployment must refuse, e.g. ``POST /v1/videos`` to an image model, and passes only on a 4xx
answer within the deadline whose error message matches the patterns, with the server still
healthy afterwards. A success, a silent fallback, a hang, a slow failure or an unhelpful message
FAILS with the reason. Time-to-failure is a Measurement; the scrubbed log tail an artifact.
"""

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, JsonValue, field_validator

from omniqual.checks.base import CheckContext, CheckOutcome, CheckParams, verdict
from omniqual.deploy.launcher import LAUNCH_MARKER, StartupOutcome
from omniqual.domain.evidence import Artifact, CaseResult, Measurement
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.redaction import redact_command, scrub_text

_LOG_BYTES = 4 * 1024 * 1024


def _regexes(patterns: tuple[str, ...]) -> tuple[str, ...]:
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"{pattern!r} is not a regular expression: {exc}") from None
    return patterns


class FailsFastParams(CheckParams):
    deadline_s: float = Field(default=60.0, gt=0, description="Spawn to exit, at most.")
    actionable_patterns: tuple[str, ...] = Field(
        default=(), description="Regexes; at least one must match the log (names the limit)."
    )
    remedy_patterns: tuple[str, ...] = Field(
        default=(), description="Regexes; if given, one must match the error (names a remedy)."
    )
    tail_lines: int = Field(default=40, ge=1, le=500)
    hang_margin_s: float = Field(
        default=10.0, ge=0, description="Readiness is given up this long after the deadline."
    )
    attempts: int = Field(
        default=2, ge=2, le=5,
        description="Launches that must all be refused the same way (a stable restriction).",
    )  # fmt: skip

    _valid = field_validator("actionable_patterns")(_regexes)


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_ERROR_LINE = re.compile(r"(?i)\b(error|exception|fatal|traceback)\b")
# What a crash looks like on its last line: an exception, a kill, an allocator failure.
_CRASH = re.compile(
    r"(?i)(\w*(error|exception)\b|\bfatal\b|\bkilled\b|out of memory|segmentation fault"
    r"|core dumped|\babort)"
)


def _lines_matching(pattern: str | re.Pattern[str], text: str) -> list[str]:
    """Each distinct line on which ``pattern`` matches (a match may span lines)."""
    compiled = pattern if isinstance(pattern, re.Pattern) else re.compile(pattern, re.MULTILINE)
    lines: list[str] = []
    for match in compiled.finditer(text):
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.end())
        line = text[start : end if end >= 0 else len(text)].strip()
        if line not in lines:
            lines.append(line)
    return lines


def message_findings(
    text: str,
    expected_error: str | None,
    patterns: tuple[str, ...],
    where: str,
    remedy_patterns: tuple[str, ...] = (),
) -> tuple[list[str], dict[str, JsonValue]]:
    """Failures when the error does not name the restriction (``expected_error``) or is not
    actionable, plus the matched lines as evidence. Actionable and remedy patterns are searched
    only in the error itself (the lines ``expected_error`` matched, else error-looking lines), so
    an unrelated warning elsewhere in the log cannot make a bad message pass."""
    text = _ANSI.sub("", text)
    failures: list[str] = []
    matched: dict[str, JsonValue] = {}
    last = crash_line(text)
    if expected_error is not None:
        error_lines = _lines_matching(expected_error, text)
        matched["expected_error"] = scrub_text(error_lines[0])[:500] if error_lines else None
        if not error_lines:
            failures.append(
                f"{where} does not match expected_error /{expected_error}/: the failure does"
                f" not name the restriction (crash: {last!r})"
            )
            return failures, matched  # no error line to hold to the patterns
    else:
        error_lines = _lines_matching(_ERROR_LINE, text) or text.strip().splitlines()[-1:]
    message = "\n".join(error_lines)
    for key, wanted, what in (
        ("actionable_patterns", patterns, "is not actionable"),
        ("remedy_patterns", remedy_patterns, "names no remedy"),
    ):
        if not wanted:
            continue
        hits = {p: next(iter(_lines_matching(p, message)), None) for p in wanted}
        matched[key] = {p: scrub_text(h)[:500] if h else None for p, h in hits.items()}
        if not any(hits.values()):
            failures.append(
                f"{where}: the error matches none of {key} {list(wanted)}, so it {what}"
                f" (error: {scrub_text(error_lines[0] if error_lines else last)[:300]!r})"
            )
    return failures, matched


def crash_line(text: str) -> str:
    """The line that says how a process died: the last exception-, kill- or fatal-looking line
    (a traceback's final line), else the last line; scrubbed and cut to 300 characters."""
    lines = [line.strip() for line in _ANSI.sub("", text).splitlines() if line.strip()]
    crashes = [line for line in lines if _CRASH.search(line)]
    chosen = crashes[-1] if crashes else (lines[-1] if lines else "")
    return scrub_text(chosen)[:300]


class FailsFastCheck:
    kind: ClassVar[str] = "fails_fast"
    params_model: ClassVar[type[CheckParams]] = FailsFastParams
    needs: ClassVar[Literal["server", "checkpoint", "launches"]] = "launches"
    measures: ClassVar[bool] = True  # times the refusal against its deadline
    shares_start_ups: ClassVar[bool] = False  # the timed refusal is the start-up itself

    async def run(self, ctx: CheckContext, params: CheckParams) -> CheckOutcome:
        assert isinstance(params, FailsFastParams)
        recipe = ctx.target.recipe
        if recipe is None or ctx.launch_expecting_failure is None:
            return CheckOutcome(GateOutcome.INVALID, ("fails-fast needs a recipe to launch",))
        if not params.actionable_patterns:
            return CheckOutcome(
                GateOutcome.INVALID,
                ("the gate's actionable_patterns are empty: nothing says what an actionable"
                 " refusal is",),
            )  # fmt: skip
        # Bound each attempt: a hang is given up soon after the deadline, not at the recipe's
        # (much longer) readiness timeout.
        limit = min(recipe.readiness.timeout_s, params.deadline_s + params.hang_margin_s)
        bounded = recipe.model_copy(
            update={"readiness": recipe.readiness.model_copy(update={"timeout_s": limit})}
        )
        # A row asks for this gate when the combination must be refused; a recipe seen to
        # serve (no expected_error) is still tried once, and fails for serving or for a
        # refusal nothing names. A refusal passes only when every attempt repeats it.
        wanted = params.attempts if recipe.expected_error is not None else 1
        judged: list[_Judged] = []
        log_artifacts: list[Artifact] = []
        for number in range(1, wanted + 1):
            ctx.progress(f"starting {recipe.id} (attempt {number}/{wanted}), expecting a refusal",
                         (number - 1) / wanted)  # fmt: skip
            attempt = await ctx.launch_expecting_failure(bounded)
            judged.append(_judge(attempt.startup, recipe.id, recipe.expected_error, limit, params))
            if attempt.log_artifact is not None and attempt.log_artifact not in log_artifacts:
                log_artifacts.append(attempt.log_artifact)
            if judged[-1].failures:
                break  # one attempt that is not the refusal already disproves it
        failures = [f"attempt {i}: {f}" if len(judged) > 1 else f
                    for i, j in enumerate(judged, 1) for f in j.failures]  # fmt: skip
        signatures = {j.signature for j in judged}
        if not failures and len(signatures) > 1:
            failures.append(
                f"{recipe.id} was refused differently across {len(judged)} attempts"
                f" ({'; '.join(f'exit {c}: {m!r}' for c, m in sorted(signatures, key=str))}):"
                " not a stable restriction"
            )
        worst = max(j.elapsed for j in judged)
        evidence: dict[str, Any] = {
            "recipe": recipe.id, "expected_error": recipe.expected_error,
            "attempts_wanted": wanted, "deadline_s": params.deadline_s,
            "readiness_limit_s": limit, "attempts": [j.evidence for j in judged],
        }  # fmt: skip
        artifacts = [_json_artifact(ctx, evidence, "fail-fast-evidence"), *log_artifacts]
        last = judged[-1]
        measurement = Measurement(
            name="time_to_failure", value=worst, unit="s", bound=params.deadline_s,
            ok=all(j.refused_in_time for j in judged), samples=len(judged),
        )  # fmt: skip
        return CheckOutcome(
            verdict(failures), tuple(failures), measurements=(measurement,),
            artifacts=tuple(artifacts),
            requested={"recipe": recipe.id, "expect": recipe.expect.value, "attempts": wanted},
            effective={"reason": last.reason, "exit_code": last.exit_code,
                       "matched_line": last.matched.get("expected_error"),
                       "attempts": len(judged), "refusals": len(judged) - sum(
                           1 for j in judged if j.failures)},
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class _Judged:
    """One startup attempt, judged on its own."""

    failures: tuple[str, ...]
    signature: tuple[int | None, str | None]
    """(exit code, the text ``expected_error`` matched): two refusals agree on both."""
    elapsed: float
    reason: str
    exit_code: int | None
    refused_in_time: bool
    matched: dict[str, JsonValue]
    evidence: dict[str, Any]


def _judge(
    startup: StartupOutcome,
    recipe_id: str,
    expected_error: str | None,
    limit: float,
    params: FailsFastParams,
) -> _Judged:
    text = _log_text(startup.log_path, startup.log_tail)
    failures: list[str] = []
    elapsed = startup.elapsed_s
    code = startup.exit_code
    crash = crash_line(text)
    if startup.became_ready:
        failures.append(
            f"{recipe_id} became ready after {elapsed:.1f}s and served: the restriction is"
            " not enforced (a silent fallback or a success, not a refusal)"
        )
    elif startup.reason == "timeout":
        failures.append(
            f"{recipe_id} neither became ready nor exited within {limit:g}s: a hang, not"
            " an early failure"
        )
    elif code == 0:
        failures.append(
            f"{recipe_id} exited with code 0 after {elapsed:.1f}s: a clean exit is not a"
            " refusal"
        )
    elif elapsed > params.deadline_s:
        failures.append(
            f"{recipe_id} failed only after {elapsed:.1f}s, beyond the {params.deadline_s:g}s"
            " deadline (a slow failure is not fail-fast)"
        )
    if expected_error is None:
        found: list[str] = [] if startup.became_ready else [
            f"{recipe_id} crashed (exit code {code}) and declares no expected_error, so nothing"
            f" names the restriction; the crash: {crash!r}"
        ]  # fmt: skip
        matched: dict[str, JsonValue] = {"expected_error": None}
    else:
        found, matched = message_findings(
            text, expected_error, params.actionable_patterns, f"{recipe_id} server log",
            params.remedy_patterns,
        )  # fmt: skip
        if found and matched.get("expected_error") is None:
            found[0] += f"; exit code {code}"
    if not startup.became_ready and startup.reason != "timeout":
        failures += found
    hit = re.search(expected_error, text, re.MULTILINE) if expected_error else None
    tail = [scrub_text(_ANSI.sub("", line)) for line in text.splitlines()[-params.tail_lines :]]
    evidence: dict[str, Any] = {
        "became_ready": startup.became_ready, "reason": startup.reason, "exit_code": code,
        "time_to_failure_s": round(elapsed, 3), "matched": matched,
        "crash": crash, "failures": failures,
        "command": list(redact_command(startup.command)), "log_tail": tail,
    }  # fmt: skip
    return _Judged(
        failures=tuple(failures), signature=(code, scrub_text(hit.group(0)) if hit else None),
        elapsed=elapsed, reason=startup.reason, exit_code=code,
        refused_in_time=startup.reason == "exited" and elapsed <= params.deadline_s,
        matched=matched, evidence=evidence,
    )  # fmt: skip


def _log_text(path: Path | None, tail: tuple[str, ...]) -> str:
    """This attempt's log: a log file reused across attempts is cut at its last launch marker,
    so one attempt's refusal can never stand in for another's."""
    if path is not None:
        try:
            text = path.read_bytes()[-_LOG_BYTES:].decode("utf-8", errors="replace")
        except OSError:
            pass
        else:
            start = text.rfind(LAUNCH_MARKER)
            return text[start:] if start >= 0 else text
    return "\n".join(tail)


def _json_artifact(ctx: CheckContext, doc: dict[str, Any], role: str) -> Artifact:
    return ctx.artifacts.put_artifact(
        json.dumps(doc, indent=1).encode("utf-8"), media_type="application/json", role=role,
        name=f"{role}.json",
    )  # fmt: skip


def _field_names(body: bytes) -> list[str] | None:
    try:
        doc = json.loads(body)
    except ValueError:
        return None
    return sorted(doc) if isinstance(doc, dict) else None


class FailsFastRequestParams(CheckParams):
    method: str = "POST"
    path: str = Field(pattern=r"^/", description="E.g. /v1/videos on an image-only model.")
    json_body: dict[str, JsonValue] | None = None
    form: dict[str, str] | None = Field(default=None, description="Sent as multipart/form-data.")
    expected_status: tuple[int, ...] = (400, 404, 405, 422, 501)
    deadline_s: float = Field(default=10.0, gt=0)
    actionable_patterns: tuple[str, ...] = Field(min_length=1)
    healthy_after: bool = True

    _valid = field_validator("actionable_patterns")(_regexes)


class FailsFastRequestCheck:
    kind: ClassVar[str] = "fails_fast_request"
    params_model: ClassVar[type[CheckParams]] = FailsFastRequestParams
    needs: ClassVar[Literal["server", "checkpoint", "launches"]] = "server"
    measures: ClassVar[bool] = True  # times the refusal against its deadline

    async def run(self, ctx: CheckContext, params: CheckParams) -> CheckOutcome:
        assert isinstance(params, FailsFastRequestParams)
        endpoint = f"{params.method} {params.path}"
        failures: list[str] = []
        async with ctx.make_client() as client:
            body: dict[str, Any] = {}
            if params.json_body is not None:
                body["json"] = params.json_body
            if params.form is not None:
                body["data"] = params.form
            started = time.monotonic()
            answer = await client.send_raw(
                params.method, params.path, timeout_s=params.deadline_s * 2 + 5, **body
            )
            elapsed = time.monotonic() - started
            health = await client.send_raw("GET", "/health") if params.healthy_after else None
        # A served answer echoes the request (prompt included): keep only its field names.
        if answer.ok:
            message = ""
        elif answer.error is not None:
            message = answer.error.message
        else:
            message = answer.body[:300].decode("utf-8", errors="replace")
        if answer.ok:
            failures.append(
                f"{endpoint} answered {answer.status}: the deployment served a request it must"
                " refuse (silent fallback)"
            )
        elif answer.status not in params.expected_status:
            failures.append(
                f"{endpoint} answered {answer.status}, expected one of"
                f" {list(params.expected_status)} (a server error is not a clean refusal)"
            )
        if elapsed > params.deadline_s:
            failures.append(
                f"{endpoint} was refused only after {elapsed:.2f}s, beyond {params.deadline_s:g}s"
            )
        found, matched = message_findings(
            message, None, params.actionable_patterns, f"{endpoint} error message"
        )
        if not answer.ok:
            failures += found
        if health is not None and health.status != 200:
            failures.append(f"GET /health answered {health.status} after the refusal")
        evidence = {
            "endpoint": endpoint, "status": answer.status, "elapsed_s": round(elapsed, 4),
            "deadline_s": params.deadline_s, "message": scrub_text(message)[:1000],
            "matched": matched, "health_after": health.status if health else None,
            "served_fields": _field_names(answer.body) if answer.ok else None,
        }  # fmt: skip
        case = CaseResult(
            id="refused-request", endpoint=endpoint,
            expected_status="/".join(str(s) for s in params.expected_status),
            observed_status=str(answer.status), outcome=verdict(failures),
            note=scrub_text(message)[:200],
        )  # fmt: skip
        measurement = Measurement(
            name="time_to_rejection", value=elapsed, unit="s", bound=params.deadline_s,
            ok=elapsed <= params.deadline_s,
        )  # fmt: skip
        return CheckOutcome(
            verdict(failures), tuple(failures), measurements=(measurement,),
            artifacts=(_json_artifact(ctx, evidence, "fail-fast-evidence"),), cases=(case,),
            requested={"endpoint": endpoint}, effective={"status": answer.status},
        )  # fmt: skip
