"""Log canaries (SKILL G0-20): the server never writes prompts, reference images or their base64
to its log. Per endpoint the gate sends its probe once more with a unique token appended to the
prompt and, where the probe uploads an image, an image carrying another token in a tEXt chunk
(sent as a data URL on chat, as a multipart file elsewhere). After the gate it reads what the
server's captured log gained meanwhile and looks for each token, and for the base64 run that
encodes an image's token (how a logged data URL or payload would show it).

A canary in the log fails the gate naming the token and what carried it, never the log line or
the request around it. A deployment whose log omniqual did not capture (given by URL) leaves the
check absent, said on its case; a captured log that cannot be read makes the gate invalid."""

import base64
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from omniqual.checks.api_contract.cases import Case, UploadFile, generate_cases
from omniqual.checks.api_contract.wire import marked_png
from omniqual.domain.contract import EndpointContract
from omniqual.domain.evidence import CaseResult
from omniqual.domain.outcomes import GateOutcome

CASE_ID = "side-effects/log-canaries"
TOKEN_PREFIX = "omniqual-canary-"
PROMPT_FIELDS = ("prompt", "input")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_MAX_LOG_BYTES = 256 * 1024 * 1024


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_hex(8)


@dataclass(frozen=True, slots=True)
class Canary:
    token: str
    carrier: str
    """What carried the token, as a failure names it: "the prompt", "an uploaded image"."""
    case_id: str
    needles: tuple[tuple[str, str], ...]
    """(how it shows, text searched): the token itself, and for an image its base64 run."""


def base64_run(data: bytes, marker: str) -> str:
    """The base64 characters that encode only bytes of ``marker`` inside ``data`` (encoded from
    its first byte, as a data URL or a logged payload is): whole 3-byte groups within it."""
    offset = data.index(marker.encode())
    start = -(-offset // 3) * 3
    end = (offset + len(marker)) // 3 * 3
    return base64.b64encode(data).decode()[start // 3 * 4 : end // 3 * 4]


def canary_cases(
    endpoints: tuple[EndpointContract, ...],
) -> tuple[tuple[Case, ...], tuple[Canary, ...]]:
    """One request per endpoint (its probe, carrying fresh tokens) and the canaries it carries."""
    cases: list[Case] = []
    canaries: list[Canary] = []
    for endpoint in endpoints:
        probe = generate_cases(endpoint)[0]
        case_id = f"{endpoint.api_mode}/canary"
        values = dict(probe.values)
        field = next((f for f in PROMPT_FIELDS if isinstance(values.get(f), str)), None)
        sent: list[str] = []
        if field is not None:
            token = new_token()
            values[field] = f"{values[field]} {token}"
            canaries.append(Canary(token, "the prompt", case_id, (("as text", token),)))
            sent.append(f"{field} ending in canary {token}")
        files = list(probe.files)
        if files:
            token = new_token()
            first = files[0]
            files[0] = UploadFile(first.field, "marked-png", first.media_type, marker=token)
            run = base64_run(marked_png(token), token)
            needles = (("as the image's bytes", token), ("in the image's base64", run))
            canaries.append(Canary(token, f"the uploaded {first.field}", case_id, needles))
            sent.append(f"{first.field} carrying canary {token}")
        if sent:
            cases.append(Case(case_id, endpoint.api_mode, None, "canary", values, "accepted",
                              tuple(files), "; ".join(sent)))  # fmt: skip
    return tuple(cases), tuple(canaries)


@dataclass(frozen=True, slots=True)
class LogWatch:
    """The server log from the gate's start: None path when omniqual captured no log."""

    path: Path | None
    offset: int = 0
    unreadable: str = ""

    @classmethod
    def begin(cls, path: Path | None) -> "LogWatch":
        if path is None:
            return cls(None)
        try:
            return cls(path, path.stat().st_size)
        except OSError as exc:
            return cls(path, unreadable=f"{path} ({exc.strerror or type(exc).__name__})")

    def gained(self) -> tuple[str | None, str]:
        """What the log gained since the start (colour codes stripped), or None and why."""
        if self.path is None or self.unreadable:
            return None, self.unreadable
        try:
            with self.path.open("rb") as handle:
                if os.fstat(handle.fileno()).st_size < self.offset:
                    return None, f"{self.path} shrank during the gate (rotated or truncated)"
                handle.seek(self.offset)
                data = handle.read(_MAX_LOG_BYTES)
        except OSError as exc:
            return None, f"{self.path} ({exc.strerror or type(exc).__name__})"
        return _ANSI.sub("", data.decode("utf-8", errors="replace")), ""


def canary_case(
    watch: LogWatch, canaries: tuple[Canary, ...]
) -> tuple[CaseResult, list[str], list[str]]:
    """The recorded log check: (case, failures, why it is invalid)."""
    if watch.path is None:
        note = ("not checked: no captured server log (a deployment given by URL); prompts and "
                "payloads in its log are the operator's to check")  # fmt: skip
        return _result(GateOutcome.SKIPPED, "not checked", note), [], []
    text, why = watch.gained()
    if text is None:
        note = f"server log unreadable: {why}"
        invalid = [f"{CASE_ID} not checked: {note}"]
        return _result(GateOutcome.SKIPPED, "not checked", note), [], invalid
    found = [(c, how) for c in canaries for how, needle in c.needles if needle in text]
    failures = [
        f"log_leaks_request_content: the server log holds canary {c.token} {how}: "
        f"{c.carrier} of {c.case_id} reached the log"
        for c, how in found
    ]
    if found:
        tokens = ", ".join(sorted({c.token for c, _ in found}))
        result = _result(GateOutcome.FAILED, f"{len(found)} in the log", f"in the log: {tokens}")
        return result, failures, []
    note = (f"{len(canaries)} canar(y/ies) (prompts, image bytes and base64) absent from the "
            f"{len(text.encode())} bytes the log gained during the gate")  # fmt: skip
    return _result(GateOutcome.PASSED, "none in the log", note), [], []


def _result(outcome: GateOutcome, observed: str, note: str) -> CaseResult:
    return CaseResult(
        id=CASE_ID,
        endpoint="-",
        expected_status="no canary in the server log",
        observed_status=observed,
        outcome=outcome,
        note=note[:240],
    )
