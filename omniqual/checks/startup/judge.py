"""What the start-up gate concludes from one launch: whether it became ready within the
recipe's readiness deadline (else the log's last lines say where it stopped), whether the
known-good request sent when /health first said ready was served within the bound (a /health
that says ready before the server can serve fails, named with both times), and the first
request's latency over the warm requests' median against the bound ratio (too few warm
answers decide nothing: invalid). Pure: every number comes in, findings go out."""

import re
import statistics
from dataclasses import dataclass, field

from pydantic import JsonValue

from omniqual.checks.startup.params import StartupParams
from omniqual.checks.startup.request import Sent
from omniqual.deploy.launcher import StartupOutcome
from omniqual.domain.evidence import CaseResult, Measurement
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.redaction import scrub_text

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_PROMPT = re.compile(r"(?i)prompt")


@dataclass(slots=True)
class Findings:
    failures: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    cases: list[CaseResult] = field(default_factory=list)
    measurements: list[Measurement] = field(default_factory=list)
    effective: dict[str, JsonValue] = field(default_factory=dict)

    def case(self, case_id: str, endpoint: str, expected: str, observed: str,
             outcome: GateOutcome) -> None:  # fmt: skip
        self.cases.append(CaseResult(id=case_id, endpoint=endpoint, expected_status=expected,
                                     observed_status=observed, outcome=outcome))  # fmt: skip


def safe_tail(lines: tuple[str, ...], count: int) -> list[str]:
    """The last ``count`` non-empty log lines, safe to keep: secrets masked, payloads elided,
    and a line that mentions a prompt left out whole (a warm-up may log the one it sends)."""
    kept = [_ANSI.sub("", line).strip() for line in lines]
    kept = [line for line in kept if line][-count:]
    return [("[a line mentioning a prompt, left out]" if _PROMPT.search(line)
             else scrub_text(line)[:200]) for line in kept]  # fmt: skip


def judge_startup(startup: StartupOutcome, deadline_s: float, path: str, tail_lines: int,
                  found: Findings) -> bool:  # fmt: skip
    """The time-to-ready case; whether the launch became ready."""
    found.measurements.append(Measurement(
        name="time_to_ready", value=round(startup.elapsed_s, 3), unit="s", bound=deadline_s,
        ok=startup.became_ready))  # fmt: skip
    found.effective["time_to_ready_s"] = round(startup.elapsed_s, 3)
    expected = f"200 within {deadline_s:g} s of spawn"
    if startup.became_ready:
        found.case("time-to-ready", path, expected, f"200 after {startup.elapsed_s:.1f} s",
                   GateOutcome.PASSED)  # fmt: skip
        return True
    tail = safe_tail(startup.log_tail, tail_lines)
    found.effective["log_tail"] = list(tail)
    if startup.reason == "exited":
        what = (f"exited with code {startup.exit_code} {startup.elapsed_s:.1f} s after spawn "
                f"without {path} ever answering 200")  # fmt: skip
    else:
        what = (f"never answered 200 on {path} within the {deadline_s:g} s readiness deadline "
                f"(given up after {startup.elapsed_s:.1f} s)")  # fmt: skip
    ends = " | ".join(tail) if tail else "(the log is empty or unreadable)"
    found.failures.append(f"{startup.recipe_id} {what}; its log ends: {ends}")
    found.case("time-to-ready", path, expected, f"no 200 ({startup.reason}) after "
               f"{startup.elapsed_s:.1f} s", GateOutcome.FAILED)  # fmt: skip
    return False


def judge_first(ready_s: float, handoff_s: float, first: Sent, params: StartupParams,
                health: str, api: str, found: Findings) -> bool:  # fmt: skip
    """The health-honest case: the known-good request sent ``handoff_s`` after /health first
    answered 200 (``ready_s`` after spawn) is served within the bound; whether it was."""
    bound = params.first_request_bound_s
    to_answer = handoff_s + first.elapsed_s
    ok = first.served and to_answer <= bound
    found.measurements += [
        Measurement(name="ready_to_first_answer", value=round(to_answer, 3), unit="s",
                    bound=bound, ok=ok),
        Measurement(name="first_request", value=round(first.elapsed_s, 3), unit="s", samples=1),
    ]  # fmt: skip
    found.effective |= {"handoff_s": round(handoff_s, 3), "first_request_s":
                        round(first.elapsed_s, 3), "ready_to_first_answer_s": round(to_answer, 3),
                        "first_request_problem": first.problem}  # fmt: skip
    expected = f"2xx with output within {bound:g} s of {health}'s first 200"
    at = ready_s + to_answer
    if ok:
        found.case("health-honest", api, expected, f"served {to_answer:.2f} s after ready",
                   GateOutcome.PASSED)  # fmt: skip
        return True
    if first.timed_out or first.served:
        what = f"had no answer within the {bound:g} s bound ({at:.1f} s after spawn)"
    else:
        what = f"got {first.problem} {at:.1f} s after spawn"
    found.failures.append(
        f"{health} answered 200 {ready_s:.1f} s after spawn, yet the known-good request sent "
        f"{handoff_s:.2f} s later {what}: ready before it could serve")  # fmt: skip
    found.case("health-honest", api, expected, what, GateOutcome.FAILED)
    return False


def judge_warm(first: Sent, warm: list[Sent], params: StartupParams, api: str,
               found: Findings) -> None:  # fmt: skip
    """The first-to-warm case: the first request's latency over the warm median."""
    bound = params.max_first_to_warm_ratio
    expected = f"first / warm median <= {bound:g}"
    answered = [w.elapsed_s for w in warm if w.served]
    problems = sorted({w.problem for w in warm if w.problem is not None})
    found.effective |= {"warm_s": [round(s, 3) for s in answered], "warm_problems":
                        list(problems)}  # fmt: skip
    if len(answered) < params.min_warm_samples:
        found.invalid.append(
            f"too few warm samples: {len(answered)} of {len(warm)} warm requests answered "
            f"({'; '.join(problems)}); the first-to-warm ratio needs "
            f"{params.min_warm_samples}")  # fmt: skip
        found.case("first-to-warm", api, expected, f"{len(answered)} warm answers",
                   GateOutcome.INVALID)  # fmt: skip
        return
    median = statistics.median(answered)
    ratio = first.elapsed_s / median if median > 0 else float("inf")
    ok = ratio <= bound
    found.measurements += [
        Measurement(name="warm_request_median", value=round(median, 3), unit="s",
                    samples=len(answered)),
        Measurement(name="first_to_warm_ratio", value=round(ratio, 3), unit="ratio",
                    samples=len(answered), bound=bound, ok=ok),
    ]  # fmt: skip
    found.effective |= {"warm_median_s": round(median, 3), "first_to_warm_ratio": round(ratio, 3)}
    observed = f"{ratio:.2f} ({first.elapsed_s:.2f} s / {median:.2f} s, {len(answered)} warm)"
    if not ok:
        found.failures.append(
            f"a cold first request: the first request took {first.elapsed_s:.2f} s against a "
            f"warm median {median:.2f} s of {len(answered)}, {ratio:.1f}x (bound {bound:g}x)"
        )
    found.case("first-to-warm", api, expected, observed,
               GateOutcome.PASSED if ok else GateOutcome.FAILED)  # fmt: skip
